// The timing protocol: warm-up, cache flush before every timed repetition,
// device-event timing, repetitions until the count or the budget is reached.
// docs/measurement.md describes it; its settings are stored with each sweep.
#pragma once

#include <functional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/device/backend.hpp"
#include "tuner/measure/timing_stats.hpp"

namespace kforge {

struct MeasurementProtocol {
  /// Untimed launches before timing; the tuner's untimed validation launch
  /// of the same kernel, just before, counts toward them.
  int warmup = 1;
  int min_reps = 5;         ///< always at least this many timed launches
  int max_reps = 30;
  double budget_ms = 400;   ///< stop after min_reps once this much wall time is spent
  bool flush_cache = true;  ///< evict the last-level cache before each timed launch
  /// Stop after min_reps once the median's 95% interval is at most this
  /// fraction of the median wide (0: never stop early on precision).
  double ci_rel_width = 0.04;
  /// A candidate whose fastest of `cut_after` launches is this many times
  /// slower than the best median so far stops there (0: never cut). Its
  /// median then stands on its few samples, precise enough to say it is not
  /// among the finalists, which is all the search needs of it. The launches
  /// counted include the untimed validation launch just before timing (see
  /// measure's `earlier_ms`), so at least one timed sample is always taken.
  double cut_ratio = 1.5;
  int cut_after = 2;
  int finalists = 3;         ///< the fastest candidates re-timed interleaved before a winner is declared
  /// Also re-timed: every other candidate whose search median is within this
  /// fraction of the fastest one's, since the search's few samples cannot
  /// rank candidates that close (up to max_finalists in all; 0: none).
  double finalist_window = 0.10;
  int max_finalists = 6;
  /// After min_reps, stop a candidate once its median's 95% interval lies
  /// wholly above (1 + finalist_window) x the best median so far
  /// (TimingStats::stop "outside_window"): the window will not make it a
  /// finalist, and the precision stop (ci_rel_width) may never come on a
  /// noisy host, leaving it to run to the budget.
  bool stop_outside_window = true;
  int finalist_rounds = 10;  ///< rounds of A B C, B C A, ... (one timed launch of each per round), at most
  /// From this round on, a finalist slower than the leader (the lowest
  /// median so far) in every round so far stops (TimingStats::stop
  /// "raced"); the re-timing ends when one is left (0: every finalist runs
  /// every round).
  int finalist_race_after = 5;
  /// Re-timings at most: when a candidate timed before a re-timing is stored
  /// faster than all it timed, the machine's speed changed in between, and
  /// the re-timing's fastest is re-timed again with those (finalist_retiming.hpp).
  int finalist_retimings = 3;
  /// A candidate timed while other work took at least this share of a CPU
  /// device's host (the larger of ClockRecord::other_cpu_share and
  /// cpu_wait_share) is re-timed beside the
  /// winner when its median, scaled by the share it had, would have made the
  /// finalists (finalist_retiming.hpp; 0: never).
  double retime_load_share = 0.2;

  nlohmann::json to_json() const;
};

/// Times one candidate: warm-up, then repetitions until max_reps, the median
/// is precise enough (ci_rel_width), it is surely outside the finalist
/// window of `best_ms` (stop_outside_window), the budget is spent (these
/// three after min_reps), or the candidate is cut for being cut_ratio times
/// slower than `best_ms` (0: no best yet). TimingStats::stop says which. The device's clock reader,
/// if it has one, is read right after each timed launch (TimingStats::clocks).
///
/// `earlier_ms`: the device times of launches of this kernel just before
/// (the tuner's validation launches). They are evidence for the cut only,
/// never samples: they count toward `cut_after`, and the cut compares the
/// fastest of them and the samples. Their caches were not flushed, which
/// makes them faster if anything, so they cut no more than timed samples
/// would; one slowed by first-launch costs weighs as one launch. The clock
/// reader is restarted (ClockReader::restart) before the first timed launch
/// when there are none; with some, the caller restarts it before them, so
/// that a candidate cut after one timed launch has its load counted over
/// three.
///
/// `check_first`, when given, runs right after the first timed launch (the
/// tuner reads that launch's output back and validates it: its
/// poisoned-output run is its first timed launch). When it returns false
/// timing stops there, with stop "rejected"; the caller knows why.
Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol,
                            double best_ms = 0, std::span<const double> earlier_ms = {},
                            const std::function<bool()>& check_first = {});

/// As above with the clocks read from `clocks` (nullptr: none) instead of the
/// device's own reader: any reader can watch any device's launches.
Result<TimingStats> measure(Device& device, Kernel& kernel, const std::vector<KernelArg>& args,
                            const LaunchGeometry& geometry, const MeasurementProtocol& protocol,
                            double best_ms, std::span<const double> earlier_ms, ClockReader* clocks,
                            const std::function<bool()>& check_first = {});

/// The candidates to re-time interleaved, given their search medians (ms;
/// <= 0: not ok, never chosen): the `finalists` fastest, then every other
/// within `finalist_window` of the fastest median, at most `max_finalists`
/// (never fewer than `finalists`). Indices into `medians_ms`, fastest first;
/// ties keep their order.
std::vector<std::size_t> choose_finalists(const std::vector<double>& medians_ms, const MeasurementProtocol& protocol);

/// One finalist of interleaved re-timing.
struct Finalist {
  Kernel* kernel = nullptr;
  const std::vector<KernelArg>* args = nullptr;
  LaunchGeometry geometry;
};

/// Re-times finalists interleaved: up to `finalist_rounds` rounds of one
/// timed launch of each in turn (A B C, B C A, ...), cache flushed before each,
/// so drift in the machine's state touches every finalist alike, raced
/// (`finalist_race_after`). One TimingStats per finalist, each with the
/// clocks read after its own launches; stop "interleaved", or "raced" for one
/// dropped from the race.
Result<std::vector<TimingStats>> measure_interleaved(Device& device, const std::vector<Finalist>& finalists,
                                                     const MeasurementProtocol& protocol);

/// As above with the clocks read from `clocks` (nullptr: none).
Result<std::vector<TimingStats>> measure_interleaved(Device& device, const std::vector<Finalist>& finalists,
                                                     const MeasurementProtocol& protocol, ClockReader* clocks);

}  // namespace kforge
