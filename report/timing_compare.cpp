// Bootstrap and interval comparison of two timing distributions.
#include "report/timing_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"

namespace kforge::report {

namespace {

/// splitmix64: small, fast, and the same sequence on every platform (the
/// standard library's distributions are not).
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t s_;
};

double median_of(std::vector<double>& v) {
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double hi = v[n / 2];
  if (n % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lo + hi) / 2;
}

double resampled_median(const std::vector<double>& s, SplitMix& rng, std::vector<double>& scratch) {
  scratch.resize(s.size());
  for (auto& x : scratch) x = s[rng.below(s.size())];
  return median_of(scratch);
}

double relative_spread(const TimingDistribution& d) {
  return d.median > 0 ? std::max(0.0, d.p80 - d.p20) / d.median : 0.0;
}

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", x * 100);
  return buf;
}

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

}  // namespace

TimingDistribution TimingDistribution::of(const ResultRecord& r) {
  TimingDistribution d;
  d.median = r.median_ms;
  d.p20 = r.p20_ms;
  d.p80 = r.p80_ms;
  const auto parsed = parse_json_bounded(r.samples_json.empty() ? "[]" : r.samples_json, "results.samples_json");
  if (parsed.ok() && parsed->is_array()) {
    const nlohmann::json& j = parsed.value();
    for (const auto& x : j)
      if (x.is_number() && std::isfinite(x.get<double>()) && x.get<double>() > 0) d.samples.push_back(x.get<double>());
  }
  return d;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kFaster: return "faster";
    case Verdict::kSlower: return "slower";
    case Verdict::kSame: return "same";
  }
  return "same";
}

TimingComparison compare_timings(const TimingDistribution& base, const TimingDistribution& neu, std::uint64_t seed,
                                 int resamples) {
  TimingComparison c;
  c.ratio = base.median > 0 ? neu.median / base.median : std::numeric_limits<double>::infinity();
  c.noise = std::max(relative_spread(base), relative_spread(neu));
  if (base.samples.size() >= kMinSamples && neu.samples.size() >= kMinSamples && resamples > 0) {
    c.method = "bootstrap";
    SplitMix rng(seed);
    std::vector<double> ratios, scratch;
    ratios.reserve(static_cast<std::size_t>(resamples));
    for (int i = 0; i < resamples; ++i) {
      const double b = resampled_median(base.samples, rng, scratch);
      const double n = resampled_median(neu.samples, rng, scratch);
      ratios.push_back(n / b);
    }
    std::sort(ratios.begin(), ratios.end());
    const auto count = static_cast<double>(ratios.size());
    c.ci_low = ratios[static_cast<std::size_t>(std::floor(0.025 * count))];
    c.ci_high = ratios[static_cast<std::size_t>(std::ceil(0.975 * count)) - 1];
    const double band = 1 + c.noise;
    if (c.ci_low > 1 && c.ratio > band) {
      c.verdict = Verdict::kSlower;
    } else if (c.ci_high < 1 && c.ratio < 1 / band) {
      c.verdict = Verdict::kFaster;
    }
    c.why = "ratio " + num(c.ratio) + ", 95% CI [" + num(c.ci_low) + ", " + num(c.ci_high) + "], noise band ±" +
            pct(c.noise) + ": ";
    if (c.verdict == Verdict::kSlower) {
      c.why += "the interval lies above 1 and the ratio exceeds the band";
    } else if (c.verdict == Verdict::kFaster) {
      c.why += "the interval lies below 1 and the ratio is under the band";
    } else if (c.ci_low <= 1 && c.ci_high >= 1) {
      c.why += "the interval contains 1";
    } else {
      c.why += "significant but within the band";
    }
    return c;
  }
  c.method = "interval";
  c.ci_low = c.ci_high = std::numeric_limits<double>::quiet_NaN();
  if (neu.p20 > base.p80) {
    c.verdict = Verdict::kSlower;
  } else if (neu.p80 < base.p20) {
    c.verdict = Verdict::kFaster;
  }
  c.why = "fewer than " + std::to_string(kMinSamples) + " samples on a side; base p20-p80 [" + num(base.p20) + ", " +
          num(base.p80) + "] ms, new [" + num(neu.p20) + ", " + num(neu.p80) + "] ms: " +
          (c.verdict == Verdict::kSame ? "the intervals overlap" : "the intervals are disjoint");
  return c;
}

}  // namespace kforge::report
