// Compile (or cache hit), prune, validate, time: one candidate in this process.
#include "tuner/candidate_evaluator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <set>
#include <thread>
#include <tuple>

#include "generator/declared_operator.hpp"
#include "generator/instance.hpp"
#include "generator/program_combiner.hpp"
#include "generator/workload_builder.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/device/sticky_error.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/libraries/library_kernel.hpp"
#include "templates/builtin_templates.hpp"
#include "tuner/measure/device_reference.hpp"
#include "tuner/measure/output_guard.hpp"
#include "tuner/measure/reference_file.hpp"
#include "tuner/measure/validator.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Fault injection for the isolation tests (docs/measurement.md,
/// "Isolation"): the process aborts here when the environment variable
/// `fault` names `config` (KFORGE_FAULT_ABORT_COMPILING: a compiler that
/// brings its process down; KFORGE_FAULT_ABORT_GENERATING: a kernel that
/// brings its code generator down at its first launch;
/// KFORGE_FAULT_ABORT_LAUNCHING: one that brings the measuring process down
/// at its first validation launch).
void fault_point(const char* fault, const std::string& config) {
  if (const char* f = std::getenv(fault); f && config == f) std::abort();
}

/// The reference file of a validation run kind in a reference directory.
std::string_view kind_file(WorkloadKind k) {
  return k == WorkloadKind::kPoisonedOutput ? "poisoned-output.ref" : "accumulate.ref";
}

/// The references of `hosts`: on the device for a declared operator whose
/// reference is a template, else the operator's own.
Result<std::vector<Reference>> compute_references(Device& device, const Operator& op, const Problem& problem,
                                                  const std::vector<const Workload*>& hosts) {
  const auto* declared = dynamic_cast<const DeclaredOperator*>(&op);
  if (hosts.empty() || !declared ||
      declared->declaration().reference.kind != ReferenceSpec::Kind::kTemplate) {
    return op.try_references(problem, hosts);
  }
  return device_references(device, *declared, problem, hosts);
}

/// A workload's tensors on the device plus its host copy and reference.
struct DeviceWorkload {
  WorkloadKind kind;
  std::string run_name;  ///< Operator::run_name(kind), for failure reasons
  Workload host;
  Reference reference;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<KernelArg> args;
  /// The output read back for validation: one allocation for every candidate
  /// (a fresh 64 MiB vector per validation cost as much as the comparison).
  std::vector<float> readback;
  std::vector<unsigned char> guard_scratch;  ///< the same for the guards past the outputs
};

Result<DeviceWorkload> upload_workload(Device& device, const Operator& op, const Problem& p,
                                       std::uint64_t seed, WorkloadKind kind) {
  DeviceWorkload w{kind, op.run_name(kind), op.make_workload(p, seed, kind), {}, {}, {}, {}, {}};
  const std::vector<std::size_t> outputs = output_tensors(w.host);
  for (std::size_t i = 0; i < w.host.tensors.size(); ++i) {
    const HostTensor& t = w.host.tensors[i];
    const bool guarded = std::find(outputs.begin(), outputs.end(), i) != outputs.end();
    KF_TRY_ASSIGN(buf, device.allocate(std::max<std::size_t>(t.bytes.size(), 4) +
                                       (guarded ? kOutputGuardBytes : 0)));
    KF_TRY(guarded ? write_guarded(device, *buf, t.bytes.data(), t.bytes.size())
                   : device.write(*buf, t.bytes.data(), t.bytes.size()));
    w.buffers.push_back(std::move(buf));
  }
  for (const auto& a : w.host.args) {
    switch (a.kind) {
      case OperatorArg::Kind::kTensor:
        w.args.push_back(KernelArg::of(*w.buffers[a.tensor]));
        break;
      case OperatorArg::Kind::kInt32:
        w.args.push_back(KernelArg::of(a.i32));
        break;
      case OperatorArg::Kind::kFloat32:
        w.args.push_back(KernelArg::of(a.f32));
        break;
    }
  }
  return w;
}

std::int64_t threads_per_block(const LaunchGeometry& g) {
  return g.block[0] * g.block[1] * g.block[2];
}

/// A failed step's status and reason: a sticky device error is a crash (the
/// context is gone and the process must restart), and its reason says so.
std::pair<CandidateStatus, std::string> failure(const Error& e) {
  if (!is_sticky_device_error(e)) return {status_for(e.code), e.message};
  return {CandidateStatus::kCrash,
          e.message + "; sticky device error: the device context is lost and the worker restarts"};
}

}  // namespace

struct CandidateEvaluator::Workloads {
  std::vector<DeviceWorkload> runs;  ///< poisoned-output run, then accumulate run
};

CandidateEvaluator::CandidateEvaluator(Device& device, const Operator& op, Problem problem,
                                 std::vector<const TemplateSource*> templates,
                                 const MeasurementProtocol& protocol, std::optional<BinaryCache> cache)
    : device_(device),
      op_(op),
      problem_(std::move(problem)),
      templates_(std::move(templates)),
      protocol_(protocol),
      cache_(std::move(cache)),
      workloads_(std::make_unique<Workloads>()) {}

CandidateEvaluator::~CandidateEvaluator() = default;

Result<std::unique_ptr<CandidateEvaluator>> CandidateEvaluator::create(
    Device& device, const Operator& op, const Problem& problem, std::vector<const TemplateSource*> templates,
    std::uint64_t workload_seed, const MeasurementProtocol& protocol, std::optional<BinaryCache> cache,
    const CompilePipeline& pipeline, bool code_generator, const std::string& reference_dir) {
  std::unique_ptr<CandidateEvaluator> r(
      new CandidateEvaluator(device, op, problem, std::move(templates), protocol, std::move(cache)));
  r->pipeline_ = pipeline;
  r->code_generator_ = code_generator;
  r->ahead_ =
      std::make_unique<CompileQueue<std::pair<std::string, std::string>, Ready>>(compile_threads(pipeline.threads));
  // Fresh random inputs (never zeros), one set per validation kind; the
  // references are computed once and shared by every candidate, and with a
  // reference directory by every later process of the run.
  // A code generator launches candidates only to generate their device
  // code: it needs the inputs, not the references.
  const bool shared = !code_generator && !reference_dir.empty();
  auto path_of = [&](WorkloadKind kind) { return reference_dir + "/" + std::string(kind_file(kind)); };
  std::vector<std::size_t> to_compute;  ///< runs whose reference no file held
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    // A missing, truncated or corrupt file is computed again and replaced.
    std::optional<Reference> stored;
    if (shared) {
      auto loaded = load_reference(path_of(kind), reference_key(problem, workload_seed, kind));
      if (loaded.ok()) stored = std::move(*loaded);
    }
    KF_TRY_ASSIGN(w, upload_workload(device, op, problem, op.workload_seed(workload_seed, kind), kind));
    if (stored) {
      w.reference = std::move(*stored);
      ++r->references_loaded_;
    } else if (!code_generator) {
      to_compute.push_back(r->workloads_->runs.size());
    }
    r->workloads_->runs.push_back(std::move(w));
  }
  // In one call, so that an operator whose runs share inputs (gemm: A and B)
  // computes what they share once.
  std::vector<const Workload*> hosts;
  for (std::size_t i : to_compute) hosts.push_back(&r->workloads_->runs[i].host);
  KF_TRY_ASSIGN(computed, compute_references(device, op, problem, hosts));
  for (std::size_t j = 0; j < to_compute.size(); ++j) {
    DeviceWorkload& w = r->workloads_->runs[to_compute[j]];
    w.reference = std::move(computed[j]);
    if (shared) {
      // Best effort: without the file a later process only computes again.
      (void)save_reference(path_of(w.kind), reference_key(problem, workload_seed, w.kind), w.reference);
    }
  }
  return r;
}

std::string CandidateEvaluator::failure_tail(const std::string& template_name, const std::string& config) const {
  const TemplateSource* t = find(template_name);
  const bool user = t && t->origin.rfind("builtin:", 0) != 0;
  const auto* declared = dynamic_cast<const DeclaredOperator*>(&op_);
  return (declared ? "; reference: " + describe_reference(*declared, device_.info()) : std::string()) +
         "; rerun: " + rerun_command(problem_, template_name, config, user ? t->origin : "", rerun_db_,
                                    device_.info().selector);
}

const TemplateSource* CandidateEvaluator::find(const std::string& name) const {
  for (const TemplateSource* t : templates_) {
    if (t->manifest.name == name) return t;
  }
  return nullptr;
}

std::vector<CandidateEvaluator::Ready> CandidateEvaluator::compile_combined(
    const TemplateSource& tpl, const std::vector<std::shared_ptr<Instance>>& members,
    const std::vector<bool>& build_only) {
  std::vector<Ready> out(members.size());
  auto only_built = [&](std::size_t i) { return i < build_only.size() && build_only[i]; };
  // The program holds every member, so that its source, and PoCL's cache
  // entry for it, is the same from run to run whatever the binary cache
  // holds. Stored binaries serve only where they save that build (every
  // member stored): a stored PoCL binary is its member's own program, whose
  // machine code for its work-group size PoCL generates again at its first
  // launch (0.33-0.37 s), while the built program's is in PoCL's cache. So
  // the cache is read only until a member is missing from it.
  std::vector<std::size_t> launched;  // every member but the build-only ones
  bool all_stored = cache_.has_value();
  for (std::size_t i = 0; i < members.size(); ++i) {
    // A build-only member is compiled with the rest: a compiler it brings
    // down goes down here too.
    fault_point("KFORGE_FAULT_ABORT_COMPILING", members[i]->config_name);
    if (only_built(i)) continue;
    launched.push_back(i);
    if (!all_stored) continue;
    if (auto stored = cache_->get(cache_key(tpl, *members[i]))) {
      out[i].compiled = std::move(*stored);
      out[i].cache_hit = true;
    } else {
      all_stored = false;
    }
  }
  if (all_stored || launched.empty()) return out;
  if (members.size() > 1) {
    std::vector<const Instance*> insts;
    for (const auto& m : members) insts.push_back(m.get());
    auto source = combine_instances(tpl, prelude_text(device_.info().backend), insts);
    if (!source.ok()) {
      uncombined_.insert(tpl.manifest.name);
    } else if (auto built = template_kind(tpl).compiler(device_)->compile_combined(*source, insts, "");
               built.ok()) {
      for (std::size_t i : launched) {
        out[i].compiled = std::move((*built)[i]);
        out[i].cache_hit = false;
        out[i].combined = true;
      }
      return out;
    }
  }
  // One program each: a single member, a template that cannot share one, or
  // a combined build that failed. When each then builds, the failure came
  // from combining them, and this template is built one program each from here on.
  bool all_built = true;
  for (std::size_t i : launched) {
    if (!out[i].cache_hit) out[i].compiled = compile(tpl, *members[i], &out[i].cache_hit);
    all_built = all_built && out[i].compiled.ok();
  }
  if (members.size() > 1 && all_built) uncombined_.insert(tpl.manifest.name);
  return out;
}

Result<CompiledKernel> CandidateEvaluator::compile(const TemplateSource& tpl, const Instance& inst,
                                                bool* cache_hit) {
  if (cache_hit) *cache_hit = false;
  fault_point("KFORGE_FAULT_ABORT_COMPILING", inst.config_name);
  auto build = [&] { return template_kind(tpl).compile(device_, tpl, inst); };
  if (!cache_) return build();
  return cache_->get_or_compile(cache_key(tpl, inst), build, cache_hit, BinaryCache::Store::kWhenFree);
}

bool CandidateEvaluator::combines_programs(const TemplateSource& tpl) const {
  const Compiler* c = template_kind(tpl).compiler(device_);
  return c && c->combines_programs();
}

BinaryCacheKey CandidateEvaluator::cache_key(const TemplateSource& tpl, const Instance& inst) const {
  BinaryCacheKey key = make_cache_key(tpl.hash(prelude_text(device_.info().backend)), inst, problem_, device_.info(), "");
  template_kind(tpl).key_compiler(key);
  return key;
}

namespace {

/// "output Y element 7" for a flat index into several outputs concatenated.
std::string locate_output(const Workload& w, const std::vector<std::size_t>& outputs, std::size_t flat) {
  for (std::size_t t : outputs) {
    const std::size_t n = w.tensors[t].elements();
    if (flat < n) return "output " + w.tensors[t].name + " element " + std::to_string(flat);
    flat -= n;
  }
  return "";
}

/// Every output read back as f32 (all of them are), concatenated in
/// argument order as the reference is, and compared with the reference.
Result<ValidationResult> validate_f32(Device& device, const std::vector<std::size_t>& outputs,
                                      DeviceWorkload& w) {
  std::vector<float>& result = w.readback;
  std::size_t total = 0;
  for (std::size_t t : outputs) total += w.host.tensors[t].elements();
  result.resize(total);
  std::size_t at = 0;
  for (std::size_t t : outputs) {
    const std::size_t n = w.host.tensors[t].elements();
    KF_TRY(device.read(*w.buffers[t], result.data() + at, n * sizeof(float)));
    at += n;
  }
  return validate_output(result.data(), result.size(), w.reference);
}

/// The same for outputs of other dtypes (a declared operator's f16, f64 or
/// integer outputs): each read in its dtype and decoded exactly to double.
Result<ValidationResult> validate_decoded(Device& device, const std::vector<std::size_t>& outputs,
                                          const DeviceWorkload& w) {
  std::vector<double> values;
  for (std::size_t t : outputs) {
    HostTensor out = w.host.tensors[t];
    KF_TRY(device.read(*w.buffers[t], out.bytes.data(), out.bytes.size()));
    for (std::size_t k = 0; k < out.elements(); ++k) values.push_back(load_value(out, k));
  }
  return validate_output(values.data(), values.size(), w.reference);
}

/// Reads a validation run's output back and compares it with its reference;
/// false, with `e` failed and saying why, when it does not pass.
bool check_output(Device& device, const Problem& problem, const std::string& template_name,
                  const std::string& name, const std::string& tail, DeviceWorkload& w, Evaluation& e) {
  const std::vector<std::size_t> outputs = output_tensors(w.host);
  for (std::size_t t : outputs) {
    auto guard = check_guard(device, *w.buffers[t], w.host.tensors[t].bytes.size(), w.guard_scratch);
    if (!guard.ok()) {
      std::tie(e.status, e.reason) = failure(guard.error());
      return false;
    }
    if (guard->empty()) continue;
    e.status = CandidateStatus::kWrongResult;
    e.reason = "wrong result: template " + template_name + " config " + name + " problem " + problem.key() +
               " (" + w.run_name + "): output " + w.host.tensors[t].name + " " + *guard +
               tail;
    return false;
  }
  const bool all_f32 = std::all_of(outputs.begin(), outputs.end(),
                                   [&](std::size_t t) { return w.host.tensors[t].dtype == Dtype::kF32; });
  auto checked = all_f32 ? validate_f32(device, outputs, w) : validate_decoded(device, outputs, w);
  if (!checked.ok()) {
    std::tie(e.status, e.reason) = failure(checked.error());
    return false;
  }
  ValidationResult& v = *checked;
  if (outputs.size() > 1 && !v.passed) v.output = locate_output(w.host, outputs, v.first_bad);
  e.error_norm = std::max(e.error_norm, v.error_norm);
  e.error_ratio = std::max(e.error_ratio, v.error_ratio);
  if (!v.passed) {
    e.status = CandidateStatus::kWrongResult;
    e.reason = "wrong result: template " + template_name + " config " + name + " problem " + problem.key() +
               " (" + w.run_name + "): " + v.describe() + tail;
    return false;
  }
  return true;
}

/// Writes a validation run's initial output (poisoned, or the accumulate run's C).
Status prepare_output(Device& device, DeviceWorkload& w) {
  for (std::size_t t : output_tensors(w.host)) {
    const HostTensor& out = w.host.tensors[t];
    KF_TRY(device.write(*w.buffers[t], out.bytes.data(), out.bytes.size()));
  }
  return ok_status();
}

/// One validation run, untimed: its device time joins `e.untimed_ms`.
bool run_untimed(Device& device, const Problem& problem, const std::string& template_name,
                 const std::string& name, const std::string& tail, Kernel& kernel,
                 const LaunchGeometry& geometry, DeviceWorkload& w, Evaluation& e,
                 const std::function<void(std::string_view)>& on_phase) {
  Status st_write = prepare_output(device, w);
  // The first launch says when it runs: its code generated, what is left is the kernel's own time.
  std::function<void()> on_running;
  if (on_phase && e.untimed_ms.empty()) on_running = [&] { on_phase("running"); };
  auto launched =
      st_write.ok() ? device.launch(kernel, w.args, geometry, on_running) : Result<double>(st_write.error());
  if (!launched.ok()) {
    std::tie(e.status, e.reason) = failure(launched.error());
    return false;
  }
  e.untimed_ms.push_back(*launched);
  if (on_phase && e.untimed_ms.size() == 1) on_phase("launched");
  return check_output(device, problem, template_name, name, tail, w, e);
}

}  // namespace

/// A candidate's binary: compiled ahead of its turn, else compiled now
/// (through the binary cache). Records the compile in the evaluation, and
/// prunes on what the compiler reports before anything is loaded.
class CandidateEvaluator::CandidateBinaries final : public BinarySource {
 public:
  CandidateBinaries(CandidateEvaluator& runner, Evaluation& e) : runner_(runner), e_(e) {}

  Result<CompiledKernel> obtain(const BuildInput& input, const Compile&, KernelBuild& out) override {
    const auto t_compile = Clock::now();
    Result<CompiledKernel> compiled = Error::internal("not compiled");
    // Compiled ahead: its time is in the batch's, or, with compile overlap,
    // only the wait for a compile still running counts here.
    bool was_ready = false;
    if (auto ready = runner_.ahead_->take({input.tpl.manifest.name, input.inst.config_name}, &was_ready)) {
      compiled = std::move(ready->compiled);
      e_.cache_hit = ready->cache_hit;
      e_.compiled_ahead = runner_.pipeline_.overlap && was_ready;
      out.origin = KernelOrigin::kAhead;
    } else {
      compiled = runner_.compile(input.tpl, input.inst, &e_.cache_hit);
      e_.compiled_alone = !e_.cache_hit;
      out.origin = e_.cache_hit ? KernelOrigin::kDisk : KernelOrigin::kCompiled;
    }
    out.cache_hit = e_.cache_hit;
    e_.compile_s = seconds_since(t_compile);
    if (!compiled.ok()) {
      e_.compile_log = compiled.error().context;
      fail(status_for(compiled.error().code), compiled.error().message);
      return compiled;
    }
    // A program the compiler keeps (OpenCL) serves the finalists' re-timing
    // too, rather than a build of their own source (a combined program's
    // kernels are in no program of their own).
    if (compiled->program) runner_.built_[{input.tpl.manifest.name, input.inst.config_name}] = *compiled;
    e_.compile_ms = compiled->compile_ms;
    e_.compile_log = compiled->log;
    e_.resources = compiled->resources.to_json();
    // The binary cache entry it is kept under (or would be): an export
    // finds a winner's binary by it (report/export_binaries.hpp).
    e_.resources["binary_key"] = runner_.cache_key(input.tpl, input.inst).digest();
    return compiled;
  }

  // Compile-only pruning: what the compiler reports (spills, registers,
  // shared memory, the occupancy they allow) can rule a candidate out before
  // any launch (docs/compile-only.md, "Occupancy").
  Status admit(const BuildInput& input, const CompiledKernel& binary) override {
    auto why = prune_reason(binary.resources, input.device.info(), threads_per_block(input.inst.geometry));
    if (!why) return ok_status();
    fail(CandidateStatus::kResourceLimit, "pruned before launch: " + *why);
    return Error{ErrorCode::kResource, e_.reason, {}};
  }

 private:
  void fail(CandidateStatus status, const std::string& reason) {
    e_.status = status;
    e_.reason = reason;
  }
  CandidateEvaluator& runner_;
  Evaluation& e_;
};

std::unique_ptr<Kernel> CandidateEvaluator::build_candidate(const TemplateSource& tpl, const Instance& inst,
                                                         const Config& cfg, Evaluation& e) {
  const auto t_build = Clock::now();
  CandidateBinaries binaries(*this, e);
  auto built = template_kind(tpl).build(BuildInput{device_, tpl, inst, problem_, cfg}, binaries);
  if (!built.ok()) {
    // A compile or a pruning has said why already; a load or a bind has not.
    if (e.status == CandidateStatus::kOk) std::tie(e.status, e.reason) = failure(built.error());
    return nullptr;
  }
  if (!built->binary) {  // a bound library call: the library built what it runs, here
    e.compile_s = seconds_since(t_build);
    e.compile_ms = e.compile_s * 1e3;
  }
  // What the library chose (cuBLASLt's algorithm) is stored with the result,
  // so the runtime binds that one again.
  if (!built->library_call.is_null()) e.resources = nlohmann::json{{"library_call", built->library_call}};
  return std::move(built->kernel);
}

Result<Evaluation> CandidateEvaluator::validate_one(const std::string& template_name, const Config& cfg,
                                                 const std::function<void(std::string_view)>& on_phase,
                                                 Validated& held) {
  const TemplateSource* tpl = find(template_name);
  if (!tpl) return Error::bad_input("no template named '" + template_name + "' in this tuning run");
  const std::string name = cfg.canonical_name();
  const DeviceInfo& info = device_.info();
  Evaluation e;
  auto fail = [&](CandidateStatus status, const std::string& reason) {
    e.status = status;
    e.reason = reason;
  };
  auto inst = instantiate(*tpl, prelude_text(info.backend), op_, cfg, problem_, info.limits());
  if (!inst.ok()) {
    fail(inst.error().code == ErrorCode::kResource ? CandidateStatus::kResourceLimit
                                                   : CandidateStatus::kNotSupported,
         inst.error().message);
    return e;
  }
  std::unique_ptr<Kernel> kernel = build_candidate(*tpl, *inst, cfg, e);
  if (!kernel) return e;
  if (on_phase) on_phase("compiled");

  // Every validation run but the poisoned-output run, untimed (the
  // accumulate run); the poisoned-output run is the first timed launch
  // (evaluate). A launch that checks the output is a sample too, so a
  // candidate cut early costs two launches, not three.
  auto t_val = Clock::now();
  // The clocks' count of other load starts here: the validation launch is
  // evidence for the early cut (measure's `earlier_ms`), and a cut
  // candidate's one timed launch alone is too short to tell the load by.
  // A candidate validated ahead of its turn restarts it in evaluate().
  if (ClockReader* clocks = device_.clock_reader()) clocks->restart();
  fault_point("KFORGE_FAULT_ABORT_LAUNCHING", name);
  for (std::size_t i = 1; i < workloads_->runs.size() && e.status == CandidateStatus::kOk; ++i) {
    (void)run_untimed(device_, problem_, template_name, name, failure_tail(template_name, name), *kernel,
                      inst->geometry, workloads_->runs[i], e, on_phase);
  }
  e.validate_s = seconds_since(t_val);
  if (e.status != CandidateStatus::kOk) return e;
  held.kernel = std::move(kernel);
  held.geometry = inst->geometry;
  return e;
}

Result<Evaluation> CandidateEvaluator::validate(const std::string& template_name, const Config& cfg,
                                             const std::function<void(std::string_view)>& on_phase) {
  Validated held;
  KF_TRY_ASSIGN(e, validate_one(template_name, cfg, on_phase, held));
  if (e.status == CandidateStatus::kOk) {
    held.partial = e;
    validated_[{template_name, cfg.canonical_name()}] = std::move(held);
  }
  return e;
}

Result<Evaluation> CandidateEvaluator::profile_launch(
    const std::string& template_name, const Config& cfg,
    const std::function<void(const std::function<Status()>&)>& around) {
  Validated held;
  KF_TRY_ASSIGN(e, validate_one(template_name, cfg, {}, held));
  if (e.status != CandidateStatus::kOk) return e;
  DeviceWorkload& run = workloads_->runs[0];
  // A first launch on these buffers pays their one-off costs (evaluate's
  // reason too), so the profiled launch sees only the kernel's own work.
  if (auto warm = device_.launch(*held.kernel, run.args, held.geometry); !warm.ok()) {
    std::tie(e.status, e.reason) = failure(warm.error());
    return e;
  }
  KF_TRY(device_.flush_cache());
  around([&]() -> Status {
    auto launched = device_.launch(*held.kernel, run.args, held.geometry);
    if (!launched.ok()) return launched.error();
    return ok_status();
  });
  return e;
}

Result<Evaluation> CandidateEvaluator::evaluate(const std::string& template_name, const Config& cfg,
                                             double best_ms,
                                             const std::function<void(std::string_view)>& on_phase) {
  const std::string name = cfg.canonical_name();
  Validated held;
  Evaluation e;
  if (auto it = validated_.find({template_name, name}); it != validated_.end()) {
    // Validated ahead (validate): its compile and validation times were
    // reported then.
    held = std::move(it->second);
    validated_.erase(it);
    e = std::move(held.partial);
    e.compile_s = e.validate_s = 0;
    if (on_phase) on_phase("compiled");
    if (ClockReader* clocks = device_.clock_reader()) clocks->restart();
  } else {
    KF_TRY_ASSIGN(v, validate_one(template_name, cfg, on_phase, held));
    e = std::move(v);
    if (e.status != CandidateStatus::kOk) return e;
  }
  if (!device_.times_kernels()) {
    e.status = CandidateStatus::kValidated;
    e.reason = "results match the reference on " + device_.info().name + ", which does not time kernels";
    return e;
  }

  // The poisoned-output run is the first timed launch: its output poisoned,
  // the caches flushed, and checked before the next launch; a candidate
  // that fails it keeps no sample.
  DeviceWorkload& timed_run = workloads_->runs[0];
  auto t_val = Clock::now();
  if (!timed_buffers_used_) {
    // The first launch on a buffer pays one-off costs (PoCL: 1.46x the
    // median in one run, most likely moving the buffers to the device), which would
    // land in this process's first timed launch: one untimed launch on the
    // timed run's buffers takes them, once per process.
    auto launched = device_.launch(*held.kernel, timed_run.args, held.geometry);
    if (!launched.ok()) {
      std::tie(e.status, e.reason) = failure(launched.error());
      return e;
    }
    timed_buffers_used_ = true;
  }
  if (Status st = prepare_output(device_, timed_run); !st.ok()) {
    std::tie(e.status, e.reason) = failure(st.error());
    return e;
  }
  e.validate_s += seconds_since(t_val);
  auto t_meas = Clock::now();
  // The validation launch just ran this kernel, or, validated ahead, ran it
  // before the batch's others: it counts as warm-up either way, since every
  // timed launch starts from flushed caches.
  MeasurementProtocol protocol = protocol_;
  protocol.warmup = std::max(0, protocol.warmup - static_cast<int>(e.untimed_ms.size()));
  bool checked = false;
  double check_s = 0;
  auto check_first = [&] {
    const auto t = Clock::now();
    checked = true;
    const bool passed =
        check_output(device_, problem_, template_name, name, failure_tail(template_name, name), timed_run, e);
    check_s = seconds_since(t);
    return passed;
  };
  auto timing = measure(device_, *held.kernel, timed_run.args, held.geometry, protocol, best_ms, e.untimed_ms,
                        check_first);
  e.measure_s = seconds_since(t_meas) - check_s;
  e.validate_s += check_s;
  if (e.status != CandidateStatus::kOk) return e;  // the first timed launch's output failed
  if (!timing.ok()) {
    std::tie(e.status, e.reason) = failure(timing.error());
    return e;
  }
  if (!checked) {  // no timed launch (max_reps 0): the poisoned-output run untimed
    const auto t = Clock::now();
    const bool passed = run_untimed(device_, problem_, template_name, name, failure_tail(template_name, name),
                                    *held.kernel, held.geometry, timed_run, e, {});
    e.validate_s += seconds_since(t);
    if (!passed) return e;
  }
  e.timing = std::move(*timing);
  if (e.timing.stop == TimingStop::kCut) {
    double fastest = e.timing.min_ms;
    for (double ms : e.untimed_ms) fastest = std::min(fastest, ms);
    auto launches = [](std::size_t n, const char* kind) {
      return std::to_string(n) + " " + kind + (n == 1 ? " launch" : " launches");
    };
    e.reason = "cut after " + launches(static_cast<std::size_t>(e.timing.count), "timed") + " and " +
               launches(e.untimed_ms.size(), "untimed") + ": fastest " + std::to_string(fastest) + " ms > " +
               std::to_string(protocol_.cut_ratio) + " x best " + std::to_string(best_ms) + " ms";
  } else if (e.timing.stop == TimingStop::kOutsideWindow) {
    e.reason = "stopped after " + std::to_string(e.timing.count) +
               " timed launches: median's 95% interval [" + std::to_string(e.timing.ci.low_ms) + ", " +
               std::to_string(e.timing.ci.high_ms) + "] ms > " +
               std::to_string(1 + protocol_.finalist_window) + " x best " + std::to_string(best_ms) +
               " ms, outside the finalist window";
  }
  if (const std::string n = e.timing.clocks.note(); !n.empty())
    e.reason += (e.reason.empty() ? "" : "; ") + n;
  return e;
}

/// A finalist's binary for re-timing: the program its evaluation used; else
/// its share of a batch built again (a worker started since:
/// WorkerRunner::rebuild_share); else its own, counted as compiled alone.
class CandidateEvaluator::RetimeBinaries final : public BinarySource {
 public:
  RetimeBinaries(CandidateEvaluator& runner, RetimeReport& report) : runner_(runner), report_(report) {}

  Result<CompiledKernel> obtain(const BuildInput& input, const Compile&, KernelBuild& out) override {
    const std::pair<std::string, std::string> key{input.tpl.manifest.name, input.inst.config_name};
    out.origin = KernelOrigin::kAhead;
    if (auto kept = runner_.built_.find(key); kept != runner_.built_.end()) return kept->second;
    if (auto ready = runner_.ahead_->take(key); ready && ready->compiled.ok()) {
      out.cache_hit = ready->cache_hit;
      return std::move(ready->compiled);
    }
    auto compiled = runner_.compile(input.tpl, input.inst, &out.cache_hit);
    out.origin = out.cache_hit ? KernelOrigin::kDisk : KernelOrigin::kCompiled;
    report_.compiled_alone += out.cache_hit ? 0 : 1;
    return compiled;
  }

 private:
  CandidateEvaluator& runner_;
  RetimeReport& report_;
};

Result<RetimeReport> CandidateEvaluator::retime(const std::vector<CandidateRef>& refs) {
  const DeviceInfo& info = device_.info();
  RetimeReport report;
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<Finalist> finalists;
  std::vector<std::pair<std::optional<BinaryCacheKey>, CompiledKernel>> binaries;
  for (const CandidateRef& f : refs) {
    const TemplateSource* tpl = find(f.template_name);
    if (!tpl) return Error::bad_input("no template named '" + f.template_name + "' in this tuning run");
    KF_TRY_ASSIGN(cfg, Config::parse(f.config));
    KF_TRY_ASSIGN(inst, instantiate(*tpl, prelude_text(info.backend), op_, cfg, problem_, info.limits()));
    RetimeBinaries kept(*this, report);
    KF_TRY_ASSIGN(built, template_kind(*tpl).build(BuildInput{device_, *tpl, inst, problem_, cfg}, kept));
    finalists.push_back({built.kernel.get(), &workloads_->runs[0].args, inst.geometry});
    kernels.push_back(std::move(built.kernel));
    if (!built.binary) {  // bound again: a library call has no binary to keep
      binaries.push_back({std::nullopt, CompiledKernel{}});
      continue;
    }
    // Stored already (cache hit or a binary that came with the compile): nothing to add.
    const bool stored = built.cache_hit || !built.binary->binary.empty();
    binaries.push_back({stored || !cache_ ? std::nullopt : std::optional(cache_key(*tpl, inst)),
                        std::move(*built.binary)});
  }
  KF_TRY_ASSIGN(stats, measure_interleaved(device_, finalists, protocol_));
  report.timings = std::move(stats);
  const std::vector<TimingStats>& timed = report.timings;
  // The fastest finalist is the one the runtime will serve: its binary is
  // stored even where the compiler hands binaries out only at a cost
  // (PoCL: about a build's time again), the others' only where it is free.
  // Stored after timing, so the cost never lands between timed launches.
  std::size_t fastest = 0;
  for (std::size_t i = 1; i < timed.size(); ++i) {
    if (timed[i].median_ms < timed[fastest].median_ms) fastest = i;
  }
  // Stored by an earlier run already (a group's program served it this
  // time, not the cache): not built and handed out again.
  if (fastest < binaries.size() && binaries[fastest].first && !cache_->get(*binaries[fastest].first)) {
    (void)cache_->put(*binaries[fastest].first, binaries[fastest].second);  // a failed write costs speed only
  }
  return report;
}

Result<bool> CandidateEvaluator::generate(const CandidateRef& c, const std::function<void()>& on_running) {
  const TemplateSource* tpl = find(c.template_name);
  if (!tpl) return Error::bad_input("no template named '" + c.template_name + "' in this tuning run");
  KF_TRY_ASSIGN(cfg, Config::parse(c.config));
  fault_point("KFORGE_FAULT_ABORT_GENERATING", c.config);
  auto ready = ahead_->take({c.template_name, c.config});
  if (!ready || !ready->compiled.ok()) return false;
  const DeviceInfo& info = device_.info();
  KF_TRY_ASSIGN(inst, instantiate(*tpl, prelude_text(info.backend), op_, cfg, problem_, info.limits()));
  auto kernel = device_.load(*ready->compiled);
  if (!kernel.ok()) return false;
  // One work-group: PoCL generates a kernel's machine code for its
  // work-group size at the first launch and keeps it in its kernel cache,
  // where the measuring process finds it.
  LaunchGeometry one = inst.geometry;
  one.grid = {1, 1, 1};
  return device_.launch(**kernel, workloads_->runs[0].args, one, on_running).ok();
}

Result<PrecompileReport> CandidateEvaluator::precompile(const std::vector<CandidateRef>& batch) {
  const auto t0 = Clock::now();
  const DeviceInfo& info = device_.info();
  // Outcomes of this batch, counted by the compile threads.
  struct Counts {
    std::atomic<int> compiled{0}, failed{0}, cache_hits{0};
  };
  auto counts = std::make_shared<Counts>();
  PrecompileReport report;
  if (pipeline_.overlap) {
    // The batch is the tuner's whole window for its template: compiles
    // queued on a guess that has since left it stop waiting for a thread.
    std::set<std::pair<std::string, std::string>> window;
    std::set<std::string> templates;
    for (const CandidateRef& c : batch) {
      window.insert({c.template_name, c.config});
      templates.insert(c.template_name);
    }
    ahead_->drop_queued_if([&](const std::pair<std::string, std::string>& key) {
      return templates.count(key.first) && !window.count(key);
    });
  }
  // Where the plan says so (between timed runs, a compiler whose every
  // program pays a fixed front end), each template's share of the batch
  // (each group of it, where the tuner numbered groups) is one program.
  const bool combine = pipeline_.combine;
  struct Program {
    const TemplateSource* tpl;
    int group;
    std::vector<std::shared_ptr<Instance>> members;
    std::vector<bool> build_only;
  };
  std::vector<Program> to_combine;  // first seen first
  for (const CandidateRef& c : batch) {
    std::pair<std::string, std::string> key{c.template_name, c.config};
    if (ahead_->contains(key) || (c.build_only && !combine)) continue;
    const TemplateSource* tpl = find(c.template_name);
    auto cfg = tpl ? Config::parse(c.config) : Result<Config>(Error::not_found(c.template_name));
    if (!cfg.ok() || !template_kind(*tpl).compiles()) continue;  // a library call is bound where it runs
    // Instances that fail to generate are left to evaluate(), which records why.
    auto inst = instantiate(*tpl, prelude_text(info.backend), op_, *cfg, problem_, info.limits());
    if (!inst.ok()) continue;
    auto shared = std::make_shared<Instance>(std::move(*inst));
    if (combine && combines_programs(*tpl) && !uncombined_.count(tpl->manifest.name)) {
      auto program = std::find_if(to_combine.begin(), to_combine.end(),
                                  [&](const Program& p) { return p.tpl == tpl && p.group == c.group; });
      if (program == to_combine.end()) program = to_combine.insert(to_combine.end(), {tpl, c.group, {}, {}});
      program->members.push_back(shared);
      program->build_only.push_back(c.build_only);
      continue;
    }
    if (c.build_only) continue;
    const bool queued = ahead_->submit(key, [this, tpl, shared, counts] {
      Ready r;
      r.compiled = compile(*tpl, *shared, &r.cache_hit);
      ++(r.compiled.ok() ? counts->compiled : counts->failed);
      if (r.cache_hit) ++counts->cache_hits;
      return r;
    });
    report.queued += queued;
  }
  for (auto& [tpl, group, members, build_only] : to_combine) {
    if (std::all_of(build_only.begin(), build_only.end(), [](bool b) { return b; })) continue;
    std::vector<Ready> built = compile_combined(*tpl, members, build_only);
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (build_only[i]) continue;
      ++(built[i].compiled.ok() ? counts->compiled : counts->failed);
      if (built[i].cache_hit) ++counts->cache_hits;
      report.combined += built[i].combined;
      std::pair<std::string, std::string> key{tpl->manifest.name, members[i]->config_name};
      const bool queued = ahead_->submit(key, [r = std::move(built[i])] { return r; });
      report.queued += queued;
    }
  }
  if (pipeline_.overlap) {
    report.overlapped = true;
  } else {
    // Nothing runs on the device until the batch is compiled.
    ahead_->wait_idle();
    report.compiled = counts->compiled;
    report.failed = counts->failed;
    report.cache_hits = counts->cache_hits;
  }
  report.wall_s = seconds_since(t0);
  return report;
}

}  // namespace kforge
