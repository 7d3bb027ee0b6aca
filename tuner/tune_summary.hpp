// What a tuning run reports at its end: the candidates and the winner, then
// its counters grouped by what they describe, and the summary's JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/candidate_outcome.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/search/warm_start.hpp"

namespace kforge {

/// A finalist: its outcome from the search and its interleaved re-timing.
struct FinalistTiming {
  CandidateOutcome outcome;
  TimingStats interleaved;
};

/// Candidates the run considered.
struct CandidateCounts {
  int evaluated = 0;  ///< evaluated by this run
  int reused = 0;     ///< already stored, not evaluated again
  int failed = 0;     ///< of all considered, neither ok nor validated
  int validated = 0;  ///< validated on a device that does not time (CandidateStatus::kValidated)
};

/// How the winner was decided among the finalists (retime_finalists,
/// finalist_retiming.hpp).
struct RetimingCounters {
  /// Re-timings of finalists: 1, or more when the machine's speed changed
  /// between the search and a re-timing; 0: none.
  int retimings = 0;
  std::string note;  ///< why the winner stands unsettled after the last re-timing; empty when settled
  /// Candidates re-timed beside the winner because they were timed under
  /// other load on a CPU device's host (MeasurementProtocol::retime_load_share).
  int retimed_for_load = 0;
};

/// What the run searched besides each template's whole space.
struct SearchNotes {
  /// Templates left out because their architecture guard fails on this
  /// device: (template, the guard's reason).
  std::vector<std::pair<std::string, std::string>> skipped_templates;
  /// Templates whose space was too large to take whole (tuning_space.hpp):
  /// template name and what was tuned instead.
  std::vector<std::pair<std::string, std::string>> partial_spaces;
  std::vector<WarmStart> warm_starts;  ///< in the order proposed
};

/// Wall time of the run, seconds.
struct PhaseTimes {
  /// Of this run's evaluations, batches compiled ahead included.
  double compile_s = 0, validate_s = 0, measure_s = 0;
  double finalists_s = 0;  ///< re-timing the finalists, storing their timings included
  /// Starting the measuring worker (device, inputs, references; restarts
  /// included): part of total_s, none of the others. 0 in process.
  double setup_s = 0;
  double total_s = 0;
};

/// How candidates were compiled ahead of their evaluation
/// (docs/measurement.md, "Compile pipeline").
struct PipelineCounters {
  bool compile_overlap = false;  ///< compiling ahead went on while candidates were measured
  int cache_hits = 0;            ///< binaries taken from the on-disk cache
  int compiled_ahead = 0;        ///< binaries ready when their evaluation began (compile overlap on)
  /// Compiled on their own when their evaluation, or as finalists their
  /// re-timing, began (Evaluation::compiled_alone, RetimeReport::compiled_alone).
  int compiled_alone = 0;
  int guessed_ahead = 0;  ///< evaluated candidates sent to be compiled before their turn
  /// Candidates validated with their batch before any of it was timed, the
  /// batch then timed fastest first (TuneRequest::fastest_first).
  int validated_ahead = 0;
  int generated_ahead = 0;  ///< candidates whose device code the code generators generated
  int compiled_combined =
      0;  ///< candidates built within a program holding others too (Compiler::combines_programs)
  /// Why compiling ahead ended early: a batch failed to compile ahead, or the
  /// worker ended during an evaluation while compiles ran ahead (that
  /// candidate was then evaluated again alone).
  std::string compile_ahead_stopped;
};

/// What the worker processes went through (tuner/worker/worker_runner.hpp); all 0
/// in process.
struct WorkerCounters {
  int restarts = 0;  ///< workers started after a crash or timeout
  /// Validation references restarted workers read from the first worker's
  /// file instead of computing them (two per restart).
  int references_reused = 0;
  int code_generators = 0;  ///< processes that compiled batches and generated device code ahead
  int generators_lost = 0;  ///< of those, lost to a crashing or hanging candidate
  int generators_lost_running =
      0;  ///< of those, lost after the launch ran (WorkerRunner::generators_lost_running)
  /// Shares of batches built again in a worker started after the one that
  /// held them (WorkerRunner::shares_rebuilt).
  int shares_rebuilt = 0;
};

struct TuneSummary {
  std::int64_t sweep_id = 0;
  CandidateCounts counts;
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
  RetimingCounters retiming;
  SearchNotes search;
  PhaseTimes times;
  PipelineCounters pipeline;
  WorkerCounters worker;
};

/// The finalist that won (nullptr when the winner was no finalist: nothing
/// was re-timed).
const FinalistTiming* winning_finalist(const TuneSummary& s);
/// The other finalists whose interleaved timing is within noise of the
/// winner's (within_noise) and that the race did not drop (slower than the
/// leader in every round: told apart): the re-timing cannot tell them from
/// it, and another run may name one of them.
std::vector<const FinalistTiming*> within_noise_of_winner(const TuneSummary& s);

/// Version of to_json's layout. Bump it when a key is renamed, removed or
/// changes meaning (adding one needs no bump), and regenerate the golden
/// file (tests/tuner/tune_summary_test.cpp says how).
inline constexpr int kTuneSummarySchemaVersion = 1;

/// The summary as `kforge tune --json` prints it (docs/cli.md), flat keys,
/// with "schema_version". `flops`, the problem's flop count, gives the
/// winner's and the default's "gflops" (where their median is above 0).
nlohmann::json to_json(const TuneSummary& s, double flops);

}  // namespace kforge
