// The statistical rule of `kforge compare`: is one stored timing
// distribution faster than, slower than, or the same as another, within the
// noise the distributions themselves show? The rule is docs/compare.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "db/records.hpp"

namespace kforge::report {

/// What a result stores about its timing.
struct TimingDistribution {
  std::vector<double> samples;  ///< every timed repetition, ms (may be empty)
  double median = 0, p20 = 0, p80 = 0;

  /// From a result's median, p20, p80 and samples_json (unparseable samples count as none).
  static TimingDistribution of(const ResultRecord& r);
};

enum class Verdict { kFaster, kSlower, kSame };
std::string verdict_name(Verdict v);  ///< "faster", "slower", "same"

struct TimingComparison {
  double ratio = 0;    ///< new median / base median (> 1: new is slower)
  double ci_low = 0;   ///< 95% bootstrap interval of the ratio of medians; NaN for the interval method
  double ci_high = 0;
  double noise = 0;    ///< the noise band e: max over both of (p80 - p20) / median
  std::string method;  ///< "bootstrap" (both have kMinSamples samples) or "interval"
  Verdict verdict = Verdict::kSame;
  std::string why;     ///< one line that states the rule's numbers
};

inline constexpr std::size_t kMinSamples = 5;
inline constexpr int kResamples = 2000;

/// The rule: with at least kMinSamples samples on both sides, "slower" when
/// the whole 95% percentile-bootstrap interval of median(new)/median(base)
/// lies above 1 and the ratio exceeds 1 + e; "faster" when the interval lies
/// below 1 and the ratio is under 1 / (1 + e); otherwise "same". With fewer
/// samples, the stored middle 60% intervals are compared: "slower" when
/// new.p20 > base.p80, "faster" when new.p80 < base.p20. The bootstrap draws
/// come from a generator seeded by `seed`, so a comparison is reproducible.
TimingComparison compare_timings(const TimingDistribution& base, const TimingDistribution& neu, std::uint64_t seed,
                                 int resamples = kResamples);

}  // namespace kforge::report
