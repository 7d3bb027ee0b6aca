// Summary of a candidate's timed repetitions, and the device's clocks read
// beside them.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge {

/// A distribution-free confidence interval of the median: order statistics
/// [x_(j), x_(n+1-j)] whose coverage follows from the binomial distribution.
struct MedianInterval {
  double low_ms = 0, high_ms = 0;
  double coverage = 0;  ///< probability the interval holds the true median
};

/// The narrowest such interval with coverage >= `confidence`; with too few
/// samples for that (n < 6 at 95%), [min, max] and its smaller coverage.
MedianInterval median_interval(std::vector<double> samples_ms, double confidence = 0.95);

/// The clocks read right after each timed launch (docs/measurement.md,
/// "Clocks"): per sample the core clock and whether it was throttled, and a
/// summary of the rest. Empty (no source) when the device has no reader.
struct ClockRecord {
  std::string source;              ///< ClockReader::source(); empty: clocks not read
  std::vector<double> core_mhz;    ///< per timed sample, in order; -1 where the read failed
  std::vector<bool> throttled;     ///< per timed sample
  double memory_mhz_min = -1, memory_mhz_max = -1;
  double temperature_c_max = -1, power_w_max = -1;
  bool reasons_known = false;      ///< the source reports throttle reasons at all
  std::set<std::string> reasons;   ///< every reason seen, throttling or not ("gpu_idle")
  std::string error;               ///< the first failed read, if any
  /// CPU devices: the host's CPU time over the samples (clock ticks, all
  /// cores) and what other processes used of it (ClockSample::cpu_ticks);
  /// summary "other_cpu_share" = other / all, -1 when not read.
  double cpu_ticks = 0, other_cpu_ticks = 0;
  /// CPU devices: the wall time over the samples and the part of it in
  /// which tasks waited for a core (ClockSample::cpu_wait_us), microseconds;
  /// summary "cpu_wait_share" = wait / wall, -1 when not read, and
  /// "cpu_wait_wall_ms".
  double wall_us = 0, cpu_wait_us = 0;
  /// GPU devices: the most processes with a compute context on the device
  /// at any reading (ClockSample::gpu_processes), this one included; -1:
  /// not read. Summary "gpu_processes_max"; more than one is in note().
  int gpu_processes_max = -1;

  bool empty() const { return source.empty(); }
  /// other_cpu_ticks / cpu_ticks; -1 when no ticks were counted.
  double other_cpu_share() const { return cpu_ticks > 0 ? other_cpu_ticks / cpu_ticks : -1.0; }
  /// cpu_wait_us / wall_us; -1 when no wait was read.
  double cpu_wait_share() const { return wall_us > 0 ? cpu_wait_us / wall_us : -1.0; }
  /// Appends the reading taken after one timed sample.
  void add(const Result<ClockSample>& sample);
  std::int64_t throttled_count() const;
  /// "" or "3 of 20 samples throttled (sw_thermal_slowdown); the median
  /// includes them": the line a result carries when its clocks were held
  /// down, or other processes held the GPU ("2 processes had the GPU ...").
  std::string note() const;
  /// {"source", "core_mhz": [...], "throttled": [...], "summary": {...},
  /// "note"?, "error"?}; null when empty.
  nlohmann::json to_json() const;
  /// Reads what to_json wrote (null or garbage: an empty record).
  static ClockRecord from_json(const nlohmann::json& j);
};

/// Why a candidate's timed repetitions stopped (docs/measurement.md).
enum class TimingStop {
  kNone,           ///< not timed
  kMaxReps,        ///< the protocol's max_reps were taken
  kCi,             ///< the median's 95% interval became narrow enough
  kOutsideWindow,  ///< too far from the best ever to be re-timed
  kBudget,         ///< the time budget was spent
  kCut,            ///< slower than cut_ratio x the best: stopped early
  kRejected,       ///< the first launch's output failed its check
  kRaced,          ///< re-timing: slower than the leader in every round, dropped
  kInterleaved,    ///< re-timing: timed in every round
};
/// "" for kNone, else "max_reps", "ci", "outside_window", "budget", "cut",
/// "rejected", "raced" or "interleaved": the word reports and the worker
/// protocol use.
std::string_view name(TimingStop stop);
/// The stop named `word`; nullopt for a word no stop has.
std::optional<TimingStop> timing_stop_named(std::string_view word);

struct TimingStats {
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0, max_ms = 0;
  std::int64_t count = 0;
  std::vector<double> samples_ms;  ///< in the order they were taken
  MedianInterval ci;               ///< 95% interval of the median
  TimingStop stop = TimingStop::kNone;  ///< why repetitions stopped
  /// The device's clocks after each sample. Throttled samples stay in the
  /// statistics above (nothing is dropped); clocks.note() says so.
  ClockRecord clocks;

  /// Percentiles by linear interpolation between order statistics.
  static TimingStats from_samples(std::vector<double> samples_ms);
};

/// Whether two timings cannot be told apart: the intervals of their medians
/// (TimingStats::ci) overlap. Of two finalists re-timed side by side, the
/// faster median then names the winner on noise, and another run may name
/// the other (false when either has no samples).
bool within_noise(const TimingStats& a, const TimingStats& b);

/// The q-quantile (0..1) of `sorted`, linear interpolation; 0 when empty.
double quantile(const std::vector<double>& sorted, double q);

/// The median of `samples_ms` in any order; 0 when empty.
double median_of(std::vector<double> samples_ms);

/// A result's resources_json object with `timing`'s clock record under
/// "clocks" (unchanged when the record is empty): how the database stores it.
nlohmann::json resources_with_clocks(nlohmann::json resources, const TimingStats& timing);

}  // namespace kforge
