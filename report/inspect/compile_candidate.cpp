// Instantiate, compile with NVRTC, hipRTC or the offline HIP compiler, and
// judge the report: occupancy and the tuner's pruning rule.
#include "report/inspect/compile_candidate.hpp"

#include <filesystem>
#include <fstream>

#include "generator/backend_traits.hpp"
#include "generator/instance.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/device/hip/hip_offline_compiler.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge::report {

namespace {

Status write_file(const std::filesystem::path& p, const void* data, std::size_t size) {
  std::ofstream f(p, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) return Error::bad_input("--out: cannot write " + p.string());
  return ok_status();
}

/// The instance's source, binary (cubin + PTX, or code object) and log, named after its kernel.
Status write_outputs(const std::string& out_dir, const Target& target, const Instance& inst,
                     const Result<CompiledKernel>& compiled, const std::string& ptx) {
  const std::string base = (std::filesystem::path(out_dir) / inst.kernel_name).string();
  const bool cuda = is_backend(target.backend, BackendId::kCuda);
  KF_TRY(write_file(base + (cuda ? ".cu" : ".hip"), inst.source.data(), inst.source.size()));
  if (!compiled.ok()) {
    const std::string text = compiled.error().message + "\n" + compiled.error().context;
    return write_file(base + ".log", text.data(), text.size());
  }
  KF_TRY(write_file(base + (cuda ? ".cubin" : ".co"), compiled->binary.data(), compiled->binary.size()));
  if (!ptx.empty()) KF_TRY(write_file(base + ".ptx", ptx.data(), ptx.size()));
  return write_file(base + ".log", compiled->log.data(), compiled->log.size());
}

}  // namespace

bool uses_offline_hip(const Target& target, const std::string& compiler) {
  return is_backend(target.backend, BackendId::kHip) &&
         (compiler == "clang" || (compiler == "auto" && hiprtc_refuses(target.arch)));
}

Result<std::string> compiler_name(const Target& target, bool offline) {
  if (is_backend(target.backend, BackendId::kCuda)) {
    KF_TRY_ASSIGN(v, nvrtc_version());
    return "nvrtc " + v;
  }
  if (!offline) return hiprtc_version();
  auto v = offline_hip_version();
  return v.ok() ? *v : "clang (offline, unavailable: " + v.error().message + ")";
}

Result<CompiledCandidate> compile_candidate(const Target& target, bool offline, const TemplateSource& tpl,
                                            const Operator& op, const Config& cfg, const Problem& problem,
                                            const std::string& out_dir) {
  CompiledCandidate c;
  c.template_name = tpl.manifest.name;
  c.config = cfg.canonical_name();
  auto inst = instantiate(tpl, prelude_text(target.backend), op, cfg, problem, target.info.limits());
  if (!inst.ok()) {
    c.status = inst.error().code == ErrorCode::kResource ? "resource_limit" : "not_supported";
    c.reason = inst.error().message;
    return c;
  }
  c.threads = inst->geometry.block[0] * inst->geometry.block[1] * inst->geometry.block[2];
  std::string ptx;
  Result<CompiledKernel> compiled = Error::internal("unset");
  if (is_backend(target.backend, BackendId::kCuda)) {
    auto r = nvrtc_compile(inst->source, inst->kernel_name, target.arch, "");
    if (r.ok()) ptx = r->ptx;
    compiled = r.ok() ? Result<CompiledKernel>(std::move(r->kernel)) : Result<CompiledKernel>(r.error());
  } else {
    auto r = offline ? offline_hip_compile(inst->source, inst->kernel_name, target.arch, "")
                     : hiprtc_compile(inst->source, inst->kernel_name, target.arch, "");
    if (r.ok()) c.amd = r->metadata;
    compiled = r.ok() ? Result<CompiledKernel>(std::move(r->kernel)) : Result<CompiledKernel>(r.error());
  }
  if (!out_dir.empty()) KF_TRY(write_outputs(out_dir, target, *inst, compiled, ptx));
  if (!compiled.ok()) {
    if (compiled.error().code == ErrorCode::kNotFound) return compiled.error();
    c.status = compiled.error().code == ErrorCode::kUnsupported ? "not_supported" : "compile_error";
    c.reason = compiled.error().message;
    return c;
  }
  c.res = compiled->resources;
  c.compile_ms = compiled->compile_ms;
  c.occ = occupancy_detail(c.res, c.threads, target.resources);
  c.prune = prune_reason(c.res, target.info, c.threads);
  if (c.prune) {
    c.status = "resource_limit";
    c.reason = *c.prune;
  }
  return c;
}

}  // namespace kforge::report
