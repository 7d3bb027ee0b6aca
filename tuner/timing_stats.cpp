// Percentile summaries.
#include "timing_stats.hpp"

#include <algorithm>
#include <cmath>

namespace kforge {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

TimingStats TimingStats::from_samples(std::vector<double> samples_ms) {
  TimingStats s;
  s.samples_ms = samples_ms;
  std::sort(samples_ms.begin(), samples_ms.end());
  s.count = static_cast<std::int64_t>(samples_ms.size());
  if (samples_ms.empty()) return s;
  s.median_ms = quantile(samples_ms, 0.5);
  s.p20_ms = quantile(samples_ms, 0.2);
  s.p80_ms = quantile(samples_ms, 0.8);
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  return s;
}

}  // namespace kforge
