// Percentile summaries and the clock record beside them.
#include "tuner/measure/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kforge {

namespace {

constexpr std::pair<TimingStop, std::string_view> kStopNames[] = {
    {TimingStop::kNone, ""},
    {TimingStop::kMaxReps, "max_reps"},
    {TimingStop::kCi, "ci"},
    {TimingStop::kOutsideWindow, "outside_window"},
    {TimingStop::kBudget, "budget"},
    {TimingStop::kCut, "cut"},
    {TimingStop::kRejected, "rejected"},
    {TimingStop::kRaced, "raced"},
    {TimingStop::kInterleaved, "interleaved"},
};

}  // namespace

std::string_view name(TimingStop stop) {
  for (const auto& [s, word] : kStopNames) {
    if (s == stop) return word;
  }
  return "";
}

std::optional<TimingStop> timing_stop_named(std::string_view word) {
  for (const auto& [s, w] : kStopNames) {
    if (w == word) return s;
  }
  return std::nullopt;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

bool within_noise(const TimingStats& a, const TimingStats& b) {
  if (a.count == 0 || b.count == 0) return false;
  return a.ci.low_ms <= b.ci.high_ms && b.ci.low_ms <= a.ci.high_ms;
}

double median_of(std::vector<double> samples_ms) {
  std::sort(samples_ms.begin(), samples_ms.end());
  return quantile(samples_ms, 0.5);
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

namespace {

void widen(double& lo, double& hi, double v) {
  if (v < 0) return;
  if (lo < 0 || v < lo) lo = v;
  if (hi < 0 || v > hi) hi = v;
}

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace

void ClockRecord::add(const Result<ClockSample>& sample) {
  if (!sample.ok()) {
    if (error.empty()) error = sample.error().message;
    core_mhz.push_back(-1);
    throttled.push_back(false);
    return;
  }
  const ClockSample& s = *sample;
  core_mhz.push_back(s.core_mhz);
  throttled.push_back(s.throttled);
  widen(memory_mhz_min, memory_mhz_max, s.memory_mhz);
  double unused = -1;
  widen(unused, temperature_c_max, s.temperature_c);
  unused = -1;
  widen(unused, power_w_max, s.power_w);
  if (s.reasons_known) reasons_known = true;
  reasons.insert(s.reasons.begin(), s.reasons.end());
  if (s.cpu_ticks > 0 && s.other_cpu_ticks >= 0) {
    cpu_ticks += s.cpu_ticks;
    other_cpu_ticks += s.other_cpu_ticks;
  }
  if (s.wall_us > 0 && s.cpu_wait_us >= 0) {
    wall_us += s.wall_us;
    cpu_wait_us += s.cpu_wait_us;
  }
  gpu_processes_max = std::max(gpu_processes_max, s.gpu_processes);
}

std::int64_t ClockRecord::throttled_count() const {
  return std::count(throttled.begin(), throttled.end(), true);
}

std::string ClockRecord::note() const {
  const std::int64_t n = throttled_count();
  std::ostringstream out;
  if (gpu_processes_max > 1) {
    out << gpu_processes_max << " processes had the GPU while it was timed (this one included); "
        << "the median includes what the others took";
  }
  if (n == 0) return out.str();
  if (gpu_processes_max > 1) out << "; ";
  out << n << " of " << throttled.size() << " samples throttled (";
  bool first = true;
  for (const auto& r : reasons) {
    if (r == "gpu_idle" || r == "applications_clocks_setting" || r == "display_clock_setting" ||
        r == "sync_boost") {
      continue;
    }
    out << (first ? "" : ", ") << r;
    first = false;
  }
  out << "); the median includes them";
  return out.str();
}

nlohmann::json ClockRecord::to_json() const {
  if (empty()) return nullptr;
  std::vector<double> read;
  for (double v : core_mhz) {
    if (v > 0) read.push_back(v);
  }
  std::sort(read.begin(), read.end());
  nlohmann::json summary = {
      {"samples", core_mhz.size()},
      {"core_mhz_min", read.empty() ? -1.0 : read.front()},
      {"core_mhz_median", read.empty() ? -1.0 : quantile(read, 0.5)},
      {"core_mhz_max", read.empty() ? -1.0 : read.back()},
      {"memory_mhz_min", memory_mhz_min},
      {"memory_mhz_max", memory_mhz_max},
      {"temperature_c_max", temperature_c_max},
      {"power_w_max", power_w_max},
      {"reasons_known", reasons_known},
      {"throttled_samples", throttled_count()},
      {"reasons", reasons},
      {"cpu_ticks", cpu_ticks},
      {"other_cpu_share", other_cpu_share()},
      {"cpu_wait_wall_ms", wall_us * 1e-3},
      {"cpu_wait_share", cpu_wait_share()},
      {"gpu_processes_max", gpu_processes_max},
  };
  nlohmann::json j = {{"source", source}, {"core_mhz", core_mhz}, {"throttled", throttled}, {"summary", summary}};
  if (const std::string n = note(); !n.empty()) j["note"] = n;
  if (!error.empty()) j["error"] = error;
  return j;
}

ClockRecord ClockRecord::from_json(const nlohmann::json& j) {
  ClockRecord r;
  if (!j.is_object() || !j.contains("source") || !j["source"].is_string()) return r;
  r.source = j["source"].get<std::string>();
  for (const auto& v : j.value("core_mhz", nlohmann::json::array())) r.core_mhz.push_back(v.is_number() ? v.get<double>() : -1.0);
  for (const auto& v : j.value("throttled", nlohmann::json::array())) r.throttled.push_back(v.is_boolean() && v.get<bool>());
  nlohmann::json summary = j.value("summary", nlohmann::json::object());
  if (!summary.is_object()) summary = nlohmann::json::object();
  r.memory_mhz_min = number_or(summary, "memory_mhz_min", -1);
  r.memory_mhz_max = number_or(summary, "memory_mhz_max", -1);
  r.temperature_c_max = number_or(summary, "temperature_c_max", -1);
  r.power_w_max = number_or(summary, "power_w_max", -1);
  r.reasons_known = summary.value("reasons_known", false);
  for (const auto& v : summary.value("reasons", nlohmann::json::array())) {
    if (v.is_string()) r.reasons.insert(v.get<std::string>());
  }
  r.error = j.value("error", std::string());
  r.cpu_ticks = std::max(number_or(summary, "cpu_ticks", 0), 0.0);
  r.other_cpu_ticks = std::max(number_or(summary, "other_cpu_share", -1), 0.0) * r.cpu_ticks;
  r.wall_us = std::max(number_or(summary, "cpu_wait_wall_ms", 0), 0.0) * 1e3;
  r.cpu_wait_us = std::max(number_or(summary, "cpu_wait_share", -1), 0.0) * r.wall_us;
  r.gpu_processes_max = static_cast<int>(number_or(summary, "gpu_processes_max", -1));
  return r;
}

nlohmann::json resources_with_clocks(nlohmann::json resources, const TimingStats& timing) {
  if (!resources.is_object()) resources = nlohmann::json::object();
  if (!timing.clocks.empty()) resources["clocks"] = timing.clocks.to_json();
  return resources;
}

}  // namespace kforge
