// The candidate evaluator: the one place a candidate is built (through its
// template kind), validated and timed, in this process on one device. The
// workloads (two validation runs with their double-precision references)
// are uploaded once and shared by every candidate; each is evaluated against
// the best time so far (the early cut), and the finalists are re-timed
// interleaved. The tuner's session drives it, in a worker process
// (worker_main.hpp) or in its own; online tuning reaches it the same way.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "generator/operator.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "tuner/candidate_runner.hpp"
#include "tuner/pipeline/compile_queue.hpp"

namespace kforge {

class CandidateEvaluator final : public CandidateRunner {
 public:
  /// Uploads the workloads for `problem` (normalized) seeded by
  /// `workload_seed`. `templates` must outlive the runner; `cache`, when
  /// set, serves and stores compiled binaries. A `code_generator` only
  /// compiles ahead and launches one work-group of each candidate for
  /// another process to measure (RunnerSetup::code_generators): it computes
  /// no references and is never asked to evaluate. With a `reference_dir`,
  /// each validation run's reference is read from the file there when one
  /// matches (reference_file.hpp), else computed and written there for the
  /// next process of the run.
  static Result<std::unique_ptr<CandidateEvaluator>> create(Device& device, const Operator& op,
                                                            const Problem& problem,
                                                            std::vector<const TemplateSource*> templates,
                                                            std::uint64_t workload_seed,
                                                            const MeasurementProtocol& protocol,
                                                            std::optional<BinaryCache> cache,
                                                            const CompilePipeline& pipeline = {},
                                                            bool code_generator = false,
                                                            const std::string& reference_dir = {});
  ~CandidateEvaluator() override;

  Result<Evaluation> evaluate(const std::string& template_name, const Config& config, double best_ms,
                              const std::function<void(std::string_view)>& on_phase = {}) override;
  /// Validates ahead (CandidateRunner::validate); an ok candidate stays
  /// loaded here until evaluate() times it.
  Result<Evaluation> validate(const std::string& template_name, const Config& config,
                              const std::function<void(std::string_view)>& on_phase = {}) override;
  Result<RetimeReport> retime(const std::vector<CandidateRef>& finalists) override;
  Result<PrecompileReport> precompile(const std::vector<CandidateRef>& batch) override;
  /// For a code generator (create's `code_generator`): launches one
  /// work-group of `c`, compiled by an earlier precompile(), so that PoCL
  /// generates its machine code and caches it for the measuring process;
  /// the binary is not kept. False when `c` did not compile or the launch failed.
  /// `on_running`: called once that launch runs, its machine code generated
  /// and cached (Device::launch); what is left is one work-group's run.
  Result<bool> generate(const CandidateRef& c, const std::function<void()>& on_running = {});

  /// Validates `config` (compile, load, the validation runs), then launches
  /// it once more on the timed run's buffers, from flushed caches, inside
  /// `around`, which gets that launch to call between a collector's start
  /// and stop (docs/profiling.md). No timing is taken or reported: this is
  /// never one of the timed launches. The Evaluation is the validation's; a
  /// failed candidate is not launched again and `around` is not called.
  Result<Evaluation> profile_launch(const std::string& template_name, const Config& config,
                                    const std::function<void(const std::function<Status()>&)>& around);

  /// Validation references create() read from the reference directory (0 to 2).
  int references_loaded() const { return references_loaded_; }
  /// The database a failure's rerun line names (empty: none).
  void set_rerun_database(std::string db) { rerun_db_ = std::move(db); }

 private:
  struct Workloads;
  /// A candidate through validation, loaded, waiting for its timed launches.
  struct Validated {
    std::unique_ptr<Kernel> kernel;
    LaunchGeometry geometry;
    Evaluation partial;  ///< ok: compile details, error norms, untimed_ms
  };
  /// Compile, prune, load and the untimed validation runs of one candidate;
  /// an ok one's kernel and geometry go to `held`.
  Result<Evaluation> validate_one(const std::string& template_name, const Config& config,
                                  const std::function<void(std::string_view)>& on_phase, Validated& held);
  class CandidateBinaries;
  class RetimeBinaries;
  /// Builds `inst` through its template's kind: compiled (or its binary
  /// taken from those compiled ahead or cached), pruned and loaded, or a
  /// library call bound; null with `e` failed and saying why.
  std::unique_ptr<Kernel> build_candidate(const TemplateSource& tpl, const Instance& inst, const Config& cfg,
                                          Evaluation& e);
  CandidateEvaluator(Device& device, const Operator& op, Problem problem,
                  std::vector<const TemplateSource*> templates, const MeasurementProtocol& protocol,
                  std::optional<BinaryCache> cache);
  const TemplateSource* find(const std::string& name) const;
  /// What a wrong result's reason ends with: a declared operator's
  /// reference, then the command that reruns the candidate (a user
  /// template's directory and the database included).
  std::string failure_tail(const std::string& template_name, const std::string& config) const;
  /// Compiles, or takes the binary from the cache when there is one. A new
  /// binary is stored only when it is at hand (NVRTC, hipRTC): handing out a
  /// PoCL binary costs more than building the program, so on OpenCL only the
  /// fastest finalist's is stored (retime), the one the runtime will serve.
  Result<CompiledKernel> compile(const TemplateSource& tpl, const Instance& inst, bool* cache_hit);
  BinaryCacheKey cache_key(const TemplateSource& tpl, const Instance& inst) const;
  /// Whether `tpl`'s kind compiles through a Compiler that builds one program of many.
  bool combines_programs(const TemplateSource& tpl) const;
  struct Ready;
  /// Builds `members` (instances of `tpl`) as one program where the compiler
  /// combines programs (generator/program_combiner.hpp), else, or when that
  /// fails, one program each; one outcome per member, in order. Members
  /// marked in `build_only` are only in the combined program (their
  /// outcomes stay "not compiled").
  std::vector<Ready> compile_combined(const TemplateSource& tpl, const std::vector<std::shared_ptr<Instance>>& members,
                                      const std::vector<bool>& build_only = {});

  Device& device_;
  const Operator& op_;
  Problem problem_;
  std::vector<const TemplateSource*> templates_;
  MeasurementProtocol protocol_;
  std::optional<BinaryCache> cache_;
  std::unique_ptr<Workloads> workloads_;
  CompilePipeline pipeline_;  ///< threads, overlap and combined programs, as the session planned them
  bool code_generator_ = false;  ///< compiles and launches ahead only; no references, never evaluates
  int references_loaded_ = 0;
  std::string rerun_db_;
  bool timed_buffers_used_ = false;  ///< a launch has used the timed run's buffers in this process
  /// Templates whose instances are built one program each (combining them failed).
  std::set<std::string> uncombined_;
  /// Evaluated candidates' kernels in programs the compiler keeps, for retime().
  std::map<std::pair<std::string, std::string>, CompiledKernel> built_;
  /// Candidates validate() passed, by (template, configuration), until evaluated.
  std::map<std::pair<std::string, std::string>, Validated> validated_;
  struct Ready {
    Result<CompiledKernel> compiled = Error::internal("not compiled");
    bool cache_hit = false;
    bool combined = false;  ///< built in a program with other candidates (compile_combined)
  };
  /// Binaries compiled ahead by precompile(), by (template, configuration);
  /// taken by evaluate(). Declared last: its threads, which use the members
  /// above, are joined first.
  std::unique_ptr<CompileQueue<std::pair<std::string, std::string>, Ready>> ahead_;
};

}  // namespace kforge
