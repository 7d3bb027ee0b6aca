// How long each phase of a supervised worker may take before the worker is
// killed and its candidate recorded as `timeout` (worker_runner.hpp); part
// of a TuneRequest.
#pragma once

#include "tuner/measure/measurement.hpp"

namespace kforge {

/// Timeouts of the worker's phases, seconds.
struct WorkerTimeouts {
  double setup_s = 600;    ///< open the device, upload inputs, compute the references
  /// From the moment a declared operator's worker names the user reference
  /// it is about to run until it is ready: a reference that never returns
  /// fails the tune naming its library and symbol, rather than the setup.
  double reference_s = 300;
  double compile_s = 300;  ///< generate and compile one candidate
  /// Launch phase (validation and timing), after the binary is ready:
  /// launch_floor_s + the protocol's timing budget + launch_factor x the run
  /// time expected from the best median so far (validations, warm-up, every
  /// repetition). Before any candidate has a time, the third term comes from
  /// the candidate's own first validation launch once it is done (until
  /// then, none): a large problem on a slow device is not cut at the floor.
  double launch_floor_s = 20;
  double launch_factor = 10;
  /// Once a candidate's first launch runs (Device::launch: its
  /// machine code generated, on PoCL the part of a first launch no run time
  /// predicts), the floor of what is left of the launch phase, when a time
  /// is expected: run_floor_s + the timing budget + launch_factor x the
  /// expected run time (never past the limit above). A code generator's
  /// launch of one work-group gets this long to end once it runs; its
  /// machine code is in PoCL's cache by then, so one that runs longer costs
  /// only the generator. A hang then costs a few seconds instead of the floor.
  double run_floor_s = 2;

  /// The launch-phase limit for a candidate given the best median so far.
  double launch_limit_s(const MeasurementProtocol& p, double best_ms) const;
  /// What is left of the launch phase once the first launch runs, given the
  /// expected run time of one launch (ms).
  double run_limit_s(const MeasurementProtocol& p, double expected_ms) const;

 private:
  /// Both limits above but their floors: the timing budget + launch_factor x
  /// the expected time of every launch (none when `expected_ms` <= 0).
  double launches_s(const MeasurementProtocol& p, double expected_ms) const;
};

}  // namespace kforge
