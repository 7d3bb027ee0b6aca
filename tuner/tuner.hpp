// The tuner: evaluates candidate configurations of every template of an
// operator on one device and problem, validates each before timing it, and
// commits every result to the database as it finishes, so a killed sweep
// resumes where it stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "generator/operator.hpp"
#include "generator/problem.hpp"
#include "generator/template_source.hpp"
#include "runtime/device/backend.hpp"
#include "tuner/candidate_status.hpp"
#include "tuner/measure/measurement.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/tune_summary.hpp"
#include "tuner/worker/worker_timeouts.hpp"

namespace kforge {

struct TuneRequest {
  Problem problem;
  std::vector<const TemplateSource*> templates;  ///< candidates; the first is the primary
  std::string strategy = "random";
  bool strategy_defaulted = false;         ///< `strategy` is default_strategy's choice, not named by the user
  std::optional<std::string> only_config;  ///< evaluate just this configuration (rerun a failure)
  int max_evals = 0;                       ///< 0: no limit; candidates already stored count
  double time_budget_s = 0;                ///< 0: no limit
  int no_improvement = 0;                  ///< stop after this many candidates without a faster one; 0: never
  std::uint64_t seed = 1;
  /// Warm start: after the default, propose the winners of up to this many
  /// other problems of the same family (op, dtype, layout, epilogue,
  /// attributes) tuned on this device with the same template, nearest dims
  /// first, where they are in this problem's space. 0: none.
  int warm_start = 0;
  MeasurementProtocol protocol;
  std::string command_line;
  /// "background" or "blocking" when a program's lookup asked for this run
  /// (online tuning, runtime/lookup/online_tuning.hpp): the sweep's settings say
  /// so, and the lookup and `kforge show` name its winners online-tuned.
  std::string online_mode;
  /// Candidates run in a supervised worker process started with this argv
  /// (tuner/worker/worker_runner.hpp); empty: in this process, unprotected.
  std::vector<std::string> worker_command;
  WorkerTimeouts timeouts;
  /// On-disk binary cache shared with later sweeps and the runtime; empty: none.
  std::string cache_dir;
  /// Threads compiling ahead of measurement (0: from cores and memory); a
  /// fixed-order strategy's next candidates are compiled in a batch between
  /// timed runs. Negative: no compiling ahead.
  int compile_threads = 0;
  /// Whether compiling ahead may go on while candidates are measured. Auto:
  /// on a GPU or other accelerator, whose timed runs leave the host's cores
  /// to the compiler; not on a CPU device, whose kernels run on those cores
  /// (docs/measurement.md, "Compile pipeline").
  enum class CompileOverlap { kAuto, kOn, kOff } compile_overlap = CompileOverlap::kAuto;
  /// Where a fixed-order strategy's batch is compiled between timed runs:
  /// validate the batch first, then time it fastest untimed launch first,
  /// so that its slow candidates are cut against its fastest
  /// (docs/measurement.md, "Time the batch's fastest first"); false: time
  /// in the strategy's order.
  bool fastest_first = true;
};

/// What a tuning run reports as it goes: its start, each phase that runs
/// between candidates (a batch compiled ahead, the finalists' re-timing),
/// each candidate, a leader the re-timing replaced, and its end.
struct TuneEvent {
  enum class Kind { kStart, kPhase, kCandidate, kLeaderChanged, kDone };
  /// kPhase: compiling a batch ahead of its evaluations, or re-timing the finalists.
  enum class Phase { kCompile, kRetime };
  Kind kind = Kind::kStart;
  Phase phase = Phase::kCompile;
  std::size_t done = 0, total = 0;  ///< candidates so far / planned
  std::size_t batch = 0;            ///< kPhase kCompile: the batch's size; kRetime: at most this many finalists
  std::size_t compiled = 0;         ///< candidates compiled ahead so far, before this batch
  const CandidateOutcome* outcome = nullptr;  ///< for kCandidate
  const CandidateOutcome* best = nullptr;     ///< best ok so far (kLeaderChanged: the winner), if any
  const CandidateOutcome* replaced = nullptr; ///< kLeaderChanged: the search's leader
  std::string note;                           ///< kLeaderChanged: the interleaved medians that decided
  std::map<std::string, int> failures;        ///< by status name
  double elapsed_s = 0;
  double first_done_s = 0;  ///< when the first candidate finished (0: none yet), for a rate past setup
};

/// Runs tuning sessions (tuner/tuning_session.hpp) on one device into one database.
/// Which strategy a run of `request` runs, whether it was named or the
/// default for the budget, the run's seed and each template's seed for its
/// strategy (what bench/strategy_replay.cpp needs to replay the search):
/// the sweep row's settings_json and `kforge tune --json` both carry it.
nlohmann::json strategy_record(const TuneRequest& request);

class Tuner {
 public:
  Tuner(Device& device, Database& db, const Operator& op);
  Result<TuneSummary> run(const TuneRequest& request,
                          const std::function<void(const TuneEvent&)>& on_event = {});

 private:
  Device& device_;
  Database& db_;
  const Operator& op_;
};

/// A one-line command that reruns one candidate, for failure reports. A
/// user template's directory (`template_dir`, empty for a built-in) and the
/// database (`db`, empty: the default) make the line runnable as printed;
/// `device` (a selector; empty: left to "auto") reruns it where it ran.
std::string rerun_command(const Problem& p, const std::string& template_name, const std::string& config,
                          const std::string& template_dir = "", const std::string& db = "",
                          const std::string& device = "");

}  // namespace kforge
