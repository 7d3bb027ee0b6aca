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

MedianInterval median_interval(std::vector<double> samples_ms, double confidence) {
  MedianInterval ci;
  const std::size_t n = samples_ms.size();
  if (n == 0) return ci;
  std::sort(samples_ms.begin(), samples_ms.end());
  // P(X < j) for X ~ Binomial(n, 1/2): the chance that fewer than j samples
  // fall below the median. [x_(j), x_(n+1-j)] (1-based) covers it with
  // probability 1 - 2 P(X < j).
  std::vector<double> pmf(n + 1);
  double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t k = 0; k <= n; ++k) {
    pmf[k] = std::exp(std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
                      std::lgamma(static_cast<double>(n - k) + 1) + log_half_n);
  }
  std::size_t j = 1;
  double below = pmf[0];  // P(X < 1)
  while (j + 1 <= (n + 1) / 2 && 1 - 2 * (below + pmf[j]) >= confidence) {
    below += pmf[j];
    ++j;
  }
  ci.low_ms = samples_ms[j - 1];
  ci.high_ms = samples_ms[n - j];
  ci.coverage = std::max(0.0, 1 - 2 * below);
  return ci;
}

TimingStats TimingStats::from_samples(std::vector<double> samples_ms) {
  TimingStats s;
  s.ci = median_interval(samples_ms);
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
