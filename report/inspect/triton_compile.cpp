// Runs the Triton helpers' compile-only sweep and reads what it built.
#include "report/inspect/triton_compile.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "generator/backend_traits.hpp"
#include "report/inspect/artifact_inspect.hpp"
#include "runtime/binaries/sass_disassembler.hpp"
#include "runtime/device/cuda/cuda_ptxas_log.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "runtime/platform/subprocess.hpp"

namespace kforge::report {

namespace {

/// The problem as the helpers' expressions read it: dims, and a gemm's epilogue.
nlohmann::json problem_json(const Problem& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : p.dims) j[name] = value;
  if (p.op == "gemm") {
    j["bias"] = p.epilogue.bias ? 1 : 0;
    j["activation"] = static_cast<int>(p.epilogue.activation);
  }
  return j;
}

nlohmann::json limits_json(const Target& target) {
  const DeviceLimits l = target.info.limits();
  return {{"max_block_threads", l.max_block_threads}, {"local_mem_bytes", l.local_mem_bytes},
          {"max_shared_bytes", l.max_shared_bytes},   {"compute_units", l.compute_units},
          {"simd_width", l.simd_width}};
}

/// Runs the sweep; its JSON lands in `json_path`.
Status run_sweep(const std::string& dir, const Target& target, const Problem& problem,
                 const TritonSweepOptions& o, const std::string& out_dir, const std::string& json_path) {
  const std::string helpers = triton_helper_dir();
  const std::string pythonpath = helpers + (std::getenv("PYTHONPATH") ? ":" + std::string(std::getenv("PYTHONPATH")) : "");
  std::vector<std::string> argv = {"env", "PYTHONPATH=" + pythonpath,
                                   // ptxas' -v log (registers, spills, wgmma remarks) into the compile's log
                                   "TRITON_DUMP_PTXAS_LOG=1",
                                   // past Triton's own cache, or a cached kernel comes back without its log
                                   "TRITON_ALWAYS_COMPILE=1", triton_python(), "-m", "kforge_triton.sweep",
                                   "--manifest", (std::filesystem::path(dir) / "manifest.json").string(),
                                   "--target", target.backend + ":" + target.arch,
                                   "--dtype", std::string(dtype_name(problem.dtype)),
                                   "--layout", problem.layout.name(),
                                   "--problem", problem_json(problem).dump(),
                                   "--limits", limits_json(target).dump(),
                                   "--max-configs", std::to_string(o.max_configs),
                                   "--timeout-s", std::to_string(o.timeout_s),
                                   "--out", out_dir, "--json", json_path};
  if (!o.config_json.empty()) argv.insert(argv.end(), {"--config", o.config_json});
  KF_TRY_ASSIGN(run, run_subprocess(argv));
  if (run.exit_code == 0) return ok_status();
  if (run.output.find("No module named 'triton'") != std::string::npos || run.exit_code == 127) {
    return Error::not_found("Triton templates need Python with Triton (pip install triton==3.9.0) for " +
                            triton_python() + ": " + run.output);
  }
  return Error::bad_input(run.output.empty() ? "the Triton sweep failed with status " + std::to_string(run.exit_code)
                                             : run.output.substr(0, run.output.find_last_not_of('\n') + 1));
}

/// The ABI a device would launch the candidate's binary with, read from its
/// launch record; the binary's own parameter table must agree with it.
Result<nlohmann::json> launch_abi_of(const nlohmann::json& c) {
  KF_TRY_ASSIGN(kernel, read_triton_kernel(c.value("record_path", "")));
  const LaunchAbi& abi = *kernel.abi;
  return nlohmann::json{{"parameters", abi.parameters.size()},
                        {"binary_parameter_bytes", abi.binary_parameter_bytes()},
                        {"block_threads", abi.block_threads},
                        {"dynamic_shared_bytes", abi.dynamic_shared_bytes},
                        {"global_scratch_bytes", abi.global_scratch_bytes},
                        {"cluster_ctas", abi.cluster_ctas}};
}

/// What kforge's readers say of one compiled candidate: resources from
/// ptxas' log (CUDA) or the code object (HIP), Triton's dynamic shared
/// memory, the instruction mix; then occupancy and the tuner's pruning rule.
TritonCandidate read_candidate(const nlohmann::json& c, const Target& target, const std::string& template_name) {
  TritonCandidate t;
  t.compiled.template_name = template_name;
  t.compiled.config = c.value("name", "");
  t.compiled.compile_ms = c.value("seconds", 0.0) * 1e3;
  if (c.value("status", "") != "ok") {
    t.compiled.status = "compile_error";
    t.compiled.reason = c.value("reason", "");
    return t;
  }
  t.binary_path = c.value("binary_path", "");
  t.format = c.value("format", "");
  t.metadata = c.value("metadata", nlohmann::json::object());
  const std::string kernel = t.metadata.value("name", "");
  const std::int64_t warps = t.metadata.value("num_warps", 4);
  // Triton's warps are CDNA's 64-wide wavefronts on HIP.
  t.compiled.threads = warps * (is_backend(target.backend, BackendId::kHip) ? 64 : 32);
  auto report = inspect_artifact(t.binary_path, kernel);
  if (!report.ok()) {
    t.compiled.status = "compile_error";
    t.compiled.reason = report.error().message;
    return t;
  }
  t.disassembly_error = report->disassembly_error;
  if (auto abi = launch_abi_of(c); abi.ok()) {
    t.launch_abi = std::move(*abi);
  } else {  // a binary kforge's devices would refuse to launch
    t.compiled.status = abi.error().code == ErrorCode::kUnsupported ? "unsupported" : "abi_mismatch";
    t.compiled.reason = abi.error().message;
    return t;
  }
  ResourceReport& r = t.compiled.res;
  if (!report->amd_kernels.empty()) {
    t.compiled.amd = report->amd_kernels[0].metadata;
    r = amd_resource_report(t.compiled.amd);
    t.mix = report->amd_kernels[0].mix;
  } else if (!report->cubin_kernels.empty()) {
    const std::string log = c.value("log", "");
    const PtxasReport p = parse_ptxas_log(log, kernel);
    r.registers = p.registers >= 0 ? p.registers : report->cubin_kernels[0].attributes.registers;
    r.local_mem_bytes = std::max<std::int64_t>(p.shared_bytes, report->cubin_kernels[0].attributes.shared_bytes);
    r.private_mem_bytes = p.stack_bytes;
    r.spill_stores = p.spill_store_bytes;
    r.spill_loads = p.spill_load_bytes;
    r.diagnostics = parse_ptxas_diagnostics(log);
    t.mix = report->cubin_kernels[0].mix;
  }
  // Triton's shared memory is dynamic: passed at launch, not in the binary's static size.
  r.local_mem_bytes = std::max<std::int64_t>(r.local_mem_bytes, t.metadata.value("shared", std::int64_t{0}));
  t.compiled.occ = occupancy_detail(r, t.compiled.threads, target.resources);
  t.compiled.prune = prune_reason(r, target.info, t.compiled.threads);
  if (t.compiled.prune) {
    t.compiled.status = "resource_limit";
    t.compiled.reason = *t.compiled.prune;
  }
  return t;
}

}  // namespace

Result<std::vector<TritonCandidate>> compile_triton_template(const std::string& dir, const Target& target,
                                                             const Problem& problem, const TritonSweepOptions& o) {
  std::string out_dir = o.out_dir;
  std::error_code ec;
  if (out_dir.empty()) {
    out_dir = (std::filesystem::temp_directory_path() / ("kforge-triton-" + std::to_string(::getpid()))).string();
  }
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Error::bad_input("--out: cannot create '" + out_dir + "': " + ec.message());
  const std::string json_path = (std::filesystem::path(out_dir) / "sweep.json").string();
  // A temporary directory goes on every path out, failures included.
  std::unique_ptr<const std::string, void (*)(const std::string*)> temporary(
      o.out_dir.empty() ? &out_dir : nullptr, [](const std::string* d) {
        std::error_code ignored;
        std::filesystem::remove_all(*d, ignored);
      });
  KF_TRY(run_sweep(dir, target, problem, o, out_dir, json_path));
  std::ifstream in(json_path);
  nlohmann::json sweep = nlohmann::json::parse(in, nullptr, false);
  if (sweep.is_discarded() || !sweep.is_object())
    return Error::internal(json_path + ": the Triton sweep wrote no JSON object");
  if (!sweep["unmet_envelope"].empty()) {
    return Error{ErrorCode::kUnsupported,
                 dir + ": the problem " + problem.key() + " is outside the template's envelope: " +
                     sweep["unmet_envelope"].dump(),
                 {}};
  }
  // Triton's wheel carries the nvdisasm its cubins need, where the CUDA toolkit has none.
  // A KFORGE_NVDISASM the user set stays, to be reported if it is wrong.
  const char* chosen = std::getenv("KFORGE_NVDISASM");
  if (const auto& wheel = sweep["nvdisasm"]; wheel.is_string() && !(chosen && *chosen) && !find_nvdisasm().ok())
    ::setenv("KFORGE_NVDISASM", wheel.get<std::string>().c_str(), 1);
  std::vector<TritonCandidate> out;
  for (const auto& c : sweep["candidates"]) out.push_back(read_candidate(c, target, sweep.value("template", "")));
  return out;
}

}  // namespace kforge::report
