// CPU hardware counters through Linux perf_event_open: cycles, instructions,
// cache references and misses, last-level-cache loads and misses, counted on
// every thread of this process (PoCL runs kernels on its own threads) between
// start() and stop(). Where the host exposes no CPU PMU (virtual machines,
// containers) the probe says so with perf_event_open's errno text.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/profiling/counter_collection.hpp"

namespace kforge {

class PerfCounters {
 public:
  /// Empty when hardware events can be opened here; else why not, as
  /// "no CPU PMU (perf_event_open: No such file or directory)" or
  /// "not permitted (perf_event_open: Permission denied; kernel.perf_event_paranoid is 3)".
  static std::string unavailable_reason();

  /// Opens the events on every thread of this process, stopped. kUnsupported
  /// with unavailable_reason() where they cannot be opened.
  static Result<PerfCounters> open();
  PerfCounters(PerfCounters&& o) noexcept;
  PerfCounters& operator=(PerfCounters&&) = delete;
  ~PerfCounters();

  Status start();
  /// Stops counting and returns the sums over threads, one reading per event
  /// (a multiplexed event is scaled by its enabled / running time).
  Result<std::vector<CounterReading>> stop();

 private:
  struct Event {
    int fd;
    int kind;  ///< index into the event table
  };
  explicit PerfCounters(std::vector<Event> events) : events_(std::move(events)) {}
  std::vector<Event> events_;
};

/// Runs `launch` once between start() and stop() where the host allows, and
/// returns the collection, or the unavailable one saying why.
CounterCollection collect_perf(const std::function<Status()>& launch);

}  // namespace kforge
