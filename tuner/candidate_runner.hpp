// Where candidates run: the part of the tuner that touches the device.
// The tuning loop (tuning_session.cpp) picks configurations and stores results; a
// CandidateRunner compiles, prunes, validates and times them. Two kinds:
// CandidateEvaluator (candidate_evaluator.hpp), the one evaluator, runs them
// in the calling process; WorkerRunner (worker_runner.hpp) runs a
// CandidateEvaluator in a supervised worker process, so a candidate that
// crashes or hangs costs only itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"
#include "generator/template_source.hpp"
#include "tuner/candidate_status.hpp"
#include "tuner/measure/measurement.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/pipeline/compile_pipeline.hpp"

namespace kforge {

/// What a runner reports for one candidate. A failed candidate is an
/// Evaluation with a status other than ok, never an error.
struct Evaluation {
  CandidateStatus status = CandidateStatus::kOk;
  std::string reason;
  TimingStats timing;
  double error_norm = 0, error_ratio = 0, compile_ms = 0;
  bool cache_hit = false;       ///< the binary came from the on-disk cache
  bool compiled_ahead = false;  ///< compiled by the compile threads (overlap on), ready when this began
  /// Compiled on its own when its evaluation began: not in a batch ahead,
  /// not from the binary cache (a batch that failed, or a worker restarted
  /// since the batch whose share could not be built again).
  bool compiled_alone = false;
  std::string compile_log;
  nlohmann::json resources;     ///< ResourceReport::to_json, or null before a compile
  /// Device times (ms) of the untimed validation launches (the accumulate
  /// run): evidence for the early cut, and the order validate() gives.
  std::vector<double> untimed_ms;
  double compile_s = 0, validate_s = 0, measure_s = 0;  ///< wall time of each phase
};

/// Everything a runner needs to rebuild the tuning context in another
/// process: which device, problem, templates, inputs and protocol.
struct RunnerSetup {
  std::string device_selector;  ///< device_registry selector, e.g. "opencl:0"
  Problem problem;              ///< normalized
  /// Templates by origin: "builtin:<name>" or a user template directory.
  std::vector<std::string> template_origins;
  std::uint64_t workload_seed = 0;
  MeasurementProtocol protocol;
  std::string cache_dir;  ///< on-disk binary cache; empty: none
  /// How batches are compiled ahead (threads, overlap, combined programs)
  /// and how many processes generate machine code ahead: a compiler that
  /// generates it at the first launch and caches it across processes (PoCL)
  /// then does that work on all cores, between timed runs (WorkerRunner only).
  CompilePipeline pipeline = {};
  bool code_generator = false;  ///< this process is one of those
  /// Where the first worker writes the validation references and restarted
  /// ones read them (WorkerRunner makes a private one when empty).
  std::string reference_dir = {};
  /// The tuning database, named by the rerun line of a failure.
  std::string database = {};
};

/// A candidate by name: template and canonical configuration.
struct CandidateRef {
  std::string template_name;
  std::string config;
  /// Where programs are combined: the candidates of a batch with the same
  /// template and group are built as one program, in batch order (the tuner
  /// numbers runs of a fixed-order strategy's order, so that a program's
  /// members do not depend on where a batch starts). -1: the template's
  /// candidates in each process's share of the batch are one program.
  int group = -1;
  /// Built in its group's program only so that the program is the one a run
  /// evaluating it builds (its result is stored already): never launched,
  /// evaluated or counted.
  bool build_only = false;
};

/// What compiling a batch ahead of measurement did. With compile overlap
/// the batch is only queued: the counts of its outcome are unknown (0).
struct PrecompileReport {
  int queued = 0;      ///< candidates handed to the compile threads
  int compiled = 0;    ///< binaries ready (compiled now or taken from the cache)
  int failed = 0;      ///< instantiation or compile failed; evaluate() reports why
  int cache_hits = 0;
  int generated = 0;   ///< launched once ahead to generate device code (code generators)
  int combined = 0;    ///< compiled within a program holding other candidates too (Compiler::combines_programs)
  double wall_s = 0;   ///< time precompile() took: the whole batch, or only queuing it with overlap
  bool overlapped = false;  ///< queued, compiling while candidates are measured
};

/// What re-timing the finalists did.
struct RetimeReport {
  std::vector<TimingStats> timings;  ///< one per finalist, in order
  /// Finalists compiled on their own for it, not served by the binary
  /// cache: no program was kept from their evaluation (NVRTC and hipRTC keep
  /// none; on OpenCL, a worker restarted since) nor built again as their
  /// share of a batch.
  int compiled_alone = 0;
};

class CandidateRunner {
 public:
  virtual ~CandidateRunner() = default;
  /// Compiles (or takes from the binary cache), prunes on the compiler's
  /// resource report, validates on every workload, then times `config` of
  /// template `template_name`. `best_ms` (0: none yet) lets slow candidates
  /// be cut early. An error here means the runner itself failed, not the candidate.
  /// `on_phase`, when set, hears "compiled" once the binary is ready and
  /// launches begin, so a supervisor can apply a launch timeout from there,
  /// and "launched" when the first validation launch is done, so that the
  /// timeout can scale with it.
  virtual Result<Evaluation> evaluate(const std::string& template_name, const Config& config, double best_ms,
                                      const std::function<void(std::string_view)>& on_phase = {}) = 0;
  /// The first part of evaluate() ahead of it: compile (or take the binary
  /// compiled ahead), prune, load, and the untimed validation run. A
  /// candidate that fails here is final: the Evaluation says why. One that
  /// passes holds its launch's device time (`untimed_ms`) and is kept
  /// loaded, so that evaluate() of it starts with its timed launches; the
  /// tuner validates a batch first and times its fastest first, so that the
  /// slow ones are cut against it ("Time the batch's fastest first" in
  /// docs/measurement.md). evaluate() validates a candidate it no longer
  /// holds (a worker started since) itself. `on_phase` as for evaluate().
  virtual Result<Evaluation> validate(const std::string& template_name, const Config& config,
                                      const std::function<void(std::string_view)>& on_phase = {}) = 0;
  /// Re-times the finalists interleaved and raced (measure_interleaved): one TimingStats each.
  virtual Result<RetimeReport> retime(const std::vector<CandidateRef>& finalists) = 0;
  /// Compiles `batch` on a thread pool, in parallel with each other, for
  /// evaluate() to use. Without compile overlap it returns once the batch
  /// is compiled, so compiles never overlap a timed launch; with it, it
  /// returns at once and evaluate() waits only for a binary not yet ready.
  virtual Result<PrecompileReport> precompile(const std::vector<CandidateRef>& batch) = 0;
};

}  // namespace kforge
