// The launch-phase limits of a worker: a floor, the timing budget and a
// multiple of the launches' expected time.
#include "tuner/worker/worker_timeouts.hpp"

#include <algorithm>

namespace kforge {

double WorkerTimeouts::launches_s(const MeasurementProtocol& p, double expected_ms) const {
  // Validation launches (one untimed, one the first timed), warm-up, every
  // repetition, each with a cache flush.
  // The timing budget is a cap the protocol itself enforces (after min_reps),
  // so it is added once; the launches' expected time is what scales.
  const double launches = 2.0 + p.warmup + p.max_reps;
  const double expected_s = expected_ms > 0 ? launches * expected_ms * 1e-3 : 0.0;
  return p.budget_ms * 1e-3 + launch_factor * expected_s;
}

double WorkerTimeouts::launch_limit_s(const MeasurementProtocol& p, double best_ms) const {
  return launch_floor_s + launches_s(p, best_ms);
}

double WorkerTimeouts::run_limit_s(const MeasurementProtocol& p, double expected_ms) const {
  return std::min(run_floor_s, launch_floor_s) + launches_s(p, expected_ms);
}

}  // namespace kforge
