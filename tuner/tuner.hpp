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

#include "backend.hpp"
#include "candidate_status.hpp"
#include "database.hpp"
#include "measurement.hpp"
#include "operator.hpp"
#include "problem.hpp"
#include "template_source.hpp"
#include "timing_stats.hpp"
#include "worker_runner.hpp"

namespace kforge {

struct TuneRequest {
  Problem problem;
  std::vector<const TemplateSource*> templates;  ///< candidates; the first is the primary
  std::string strategy = "random";
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
  /// Candidates run in a supervised worker process started with this argv
  /// (tuner/worker_runner.hpp); empty: in this process, unprotected.
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

/// Whether `request` compiles while measuring on a device of `device_type`.
bool compile_overlaps(const TuneRequest& request, DeviceType device_type);

/// How many code-generator processes (RunnerSetup::code_generators) compile
/// `request`'s batches between timed runs for a compiler whose machine code
/// comes as `generation` says: one per compile thread where it is generated
/// at the first launch and cached on disk (PoCL with its kernel cache on),
/// when batches are compiled between timed runs (`batches`) and there is
/// more than one thread.
int code_generators(const TuneRequest& request, const CodeGeneration& generation, bool batches);

struct CandidateOutcome {
  std::string template_name;
  std::string config;
  CandidateStatus status = CandidateStatus::kOk;
  std::string reason;
  TimingStats timing;
  double error_norm = 0, error_ratio = 0, compile_ms = 0;
  bool reused = false;  ///< already stored by an earlier run of the same sweep
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

/// A finalist: its outcome from the search and its interleaved re-timing.
struct FinalistTiming {
  CandidateOutcome outcome;
  TimingStats interleaved;
};

/// A configuration proposed right after the default because it won a
/// nearby problem (TuneRequest::warm_start).
struct WarmStart {
  std::string template_name;
  std::string config;
  std::string from_problem;  ///< the problem key it won
  double distance = 0;       ///< dims_log2_distance to this problem
};

struct TuneSummary {
  std::int64_t sweep_id = 0;
  int evaluated = 0;  ///< evaluated by this run
  int reused = 0;     ///< already stored, not evaluated again
  int failed = 0;     ///< of all considered, status != ok
  std::vector<CandidateOutcome> outcomes;  ///< in evaluation order
  std::optional<CandidateOutcome> winner;
  std::optional<CandidateOutcome> default_result;  ///< primary template's default configuration
  std::string stop_reason;  ///< which stop condition ended the search; empty when the space ran out
  /// The fastest candidates re-timed interleaved (A B C, B C A, ...), when
  /// this run evaluated anything, each with its last re-timing. Their
  /// interleaved timings replace their stored results, so the winner (the
  /// fastest stored median, as the database and the runtime see it) is
  /// decided by the re-timing.
  std::vector<FinalistTiming> finalists;
  /// Re-timings of finalists: 1, or more when the machine's speed changed
  /// between the search and a re-timing (retime_finalists,
  /// finalist_retiming.hpp); 0: none.
  int retimings = 0;
  std::string retiming_note;  ///< why the winner stands unsettled after the last re-timing; empty when settled
  /// Candidates re-timed beside the winner because they were timed under
  /// other load on a CPU device's host (MeasurementProtocol::retime_load_share).
  int retimed_for_load = 0;
  bool compile_overlap = false;  ///< compiling ahead went on while candidates were measured
  int code_generators = 0;       ///< processes that compiled batches and generated device code ahead
  int generators_lost = 0;       ///< of those, lost to a crashing or hanging candidate
  int generators_lost_running = 0;  ///< of those, lost after the launch ran (WorkerRunner::generators_lost_running)
  int generated_ahead = 0;       ///< candidates whose device code they generated
  int compiled_combined = 0;     ///< candidates built within a program holding others too (Compiler::combines_programs)
  /// Candidates validated with their batch before any of it was timed, the
  /// batch then timed fastest first (TuneRequest::fastest_first).
  int validated_ahead = 0;
  /// Wall time split, seconds, of this run's evaluations.
  double compile_s = 0, validate_s = 0, measure_s = 0, total_s = 0;
  double finalists_s = 0;  ///< re-timing the finalists (retime_finalists), storing their timings included
  /// Starting the measuring worker (device, inputs, references; restarts
  /// included): part of total_s, none of the others. 0 in process.
  double setup_s = 0;
  /// Templates left out because their architecture guard fails on this
  /// device: (template, the guard's reason).
  std::vector<std::pair<std::string, std::string>> skipped_templates;
  /// Templates whose space was too large to take whole (tuning_space.hpp):
  /// template name and what was tuned instead.
  std::vector<std::pair<std::string, std::string>> partial_spaces;
  int cache_hits = 0;       ///< binaries taken from the on-disk cache
  int compiled_ahead = 0;   ///< binaries ready when their evaluation began (compile overlap on)
  /// Compiled on their own when their evaluation, or as finalists their
  /// re-timing, began (Evaluation::compiled_alone, RetimeReport::compiled_alone).
  int compiled_alone = 0;
  /// Shares of batches built again in a worker started after the one that
  /// held them (WorkerRunner::shares_rebuilt).
  int shares_rebuilt = 0;
  int guessed_ahead = 0;    ///< evaluated candidates sent to be compiled before their turn
  /// Why compiling ahead ended early: a batch failed to compile ahead, or the
  /// worker ended during an evaluation while compiles ran ahead (that
  /// candidate was then evaluated again alone).
  std::string compile_ahead_stopped;
  int worker_restarts = 0;  ///< workers started after a crash or timeout
  /// Validation references restarted workers read from the first worker's
  /// file instead of computing them (two per restart).
  int references_reused = 0;
  std::vector<WarmStart> warm_starts;  ///< in the order proposed
};

/// The finalist that won (nullptr when the winner was no finalist: nothing
/// was re-timed).
const FinalistTiming* winning_finalist(const TuneSummary& s);
/// The other finalists whose interleaved timing is within noise of the
/// winner's (within_noise) and that the race did not drop (slower than the
/// leader in every round: told apart): the re-timing cannot tell them from
/// it, and another run may name one of them.
std::vector<const FinalistTiming*> within_noise_of_winner(const TuneSummary& s);

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
/// database (`db`, empty: the default) make the line runnable as printed.
std::string rerun_command(const Problem& p, const std::string& template_name, const std::string& config,
                          const std::string& template_dir = "", const std::string& db = "");

}  // namespace kforge
