// Kind `triton`: the instance's compile request (instantiate(), a JSON text)
// compiled by Triton in a child process (triton/kforge_triton/compile.py:
// libtriton carries its own LLVM, which must not share kforge's process),
// the binary loaded with its launch record's ABI (triton_binary.hpp) and the
// instance's argument map, so the device launches it with the operator's
// arguments. The binary cache keeps the binary with its launch record (in
// CompiledKernel::options), keyed on Triton's version.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "generator/backend_traits.hpp"
#include "runtime/device/host/triton_interpreter.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "runtime/kinds/triton_helpers.hpp"
#include "runtime/platform/scratch_dir.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;

/// Seconds a compile may take: $KFORGE_TRITON_COMPILE_TIMEOUT, else 300
/// (one spilling configuration once took 61 s).
Result<double> compile_timeout() {
  const char* text = std::getenv("KFORGE_TRITON_COMPILE_TIMEOUT");
  if (!text || !*text) return 300.0;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end != '\0' || !(s > 0))
    return Error::bad_input(std::string("KFORGE_TRITON_COMPILE_TIMEOUT: '") + text + "' is not a positive number of seconds");
  return s;
}

/// The Triton target of `device`: "cuda:sm_90a" for sm_90 (Triton's
/// capability 90), "cuda:sm_80", "hip:gfx942" (target features dropped).
std::string triton_target(const DeviceInfo& device) {
  const std::string arch = device.arch.substr(0, device.arch.find(':'));
  if (is_backend(device.backend, BackendId::kCuda)) return "cuda:" + (arch == "sm_90" ? std::string("sm_90a") : arch);
  return device.backend + ":" + arch;
}

/// The helper's request for `inst` on `target`: the instance's request less
/// what is kforge's (argument map, hashes), less the options of parameters
/// that belong to another backend.
json compile_request(const json& source, const std::string& target, const std::filesystem::path& dir,
                     double timeout_s) {
  json request = source;
  const std::string backend = target.substr(0, target.find(':'));
  for (const auto& [name, backends] : source["parameter_backends"].items()) {
    if (std::find(backends.begin(), backends.end(), backend) == backends.end()) {
      request["options"].erase(name);
      request["constexprs"].erase(name);
    }
  }
  for (const char* kforge_only : {"arguments", "kernel_hash", "parameter_backends"}) request.erase(kforge_only);
  request["source_path"] = (dir / "kernel.py").string();
  request["out_dir"] = (dir / "out").string();
  request["target"] = target;
  request["timeout_s"] = timeout_s;
  return request;
}

/// `kernel` with its launch ABI and the instance's argument map (`source`,
/// its request). A binary from the binary cache has no ABI: its launch
/// record, kept in `options`, gives it again.
Status attach_abi(CompiledKernel& kernel, const json& source) {
  if (!kernel.abi) {
    const json record = json::parse(kernel.options, nullptr, false);
    if (record.is_discarded() || !record.is_object())
      return Error::bad_input(kernel.kernel_name + ": a kept Triton binary without its launch record");
    KF_TRY_ASSIGN(rebuilt, triton_compiled_kernel(record, kernel.binary));
    kernel.abi = std::move(rebuilt.abi);
    kernel.format = rebuilt.format;
  }
  LaunchAbi abi = *kernel.abi;
  apply_triton_arguments(abi, source);
  kernel.abi = std::make_shared<const LaunchAbi>(std::move(abi));
  return ok_status();
}

Result<json> read_record(const std::string& path) {
  std::ifstream in(path);
  json record = json::parse(in, nullptr, false);
  if (record.is_discarded()) return Error::bad_input(path + ": not valid JSON");
  return record;
}

class TritonKind final : public TemplateKind {
 public:
  TemplateKindId id() const override { return TemplateKindId::kTriton; }
  std::string unavailable(const TemplateSource&) const override { return triton_missing(); }
  bool compiles() const override { return true; }

  Result<CompiledKernel> compile(Device& device, const TemplateSource& tpl, const Instance& inst) const override {
    if (device.info().backend == kInterpreterBackend) return interpreted_kernel(inst.source, tpl.kernel_text);
    const std::string target = triton_target(device.info());
    const auto& targets = tpl.manifest.triton->targets;
    if (std::find(targets.begin(), targets.end(), target) == targets.end())
      return Error{ErrorCode::kUnsupported, "template " + tpl.manifest.name + " does not target " + target, {}};
    if (const std::string& why = triton_missing(); !why.empty()) return Error{ErrorCode::kUnsupported, why, {}};
    KF_TRY_ASSIGN(timeout_s, compile_timeout());
    const json source = json::parse(inst.source);
    KF_TRY_ASSIGN(path, make_scratch_dir("kforge-triton"));
    const ScratchDir dir{path};
    std::ofstream(dir.path / "kernel.py") << tpl.kernel_text;
    KF_TRY_ASSIGN(response, run_triton_helper("compile", compile_request(source, target, dir.path, timeout_s), dir.path,
                                                      ErrorCode::kCompile));
    if (!response.value("ok", false))
      return Error{ErrorCode::kCompile, response.value("error", std::string("Triton failed")),
                   response.value("log", std::string())};
    const std::string record_path = response["record_path"].get<std::string>();
    KF_TRY_ASSIGN(kernel, read_triton_kernel(record_path));
    KF_TRY_ASSIGN(record, read_record(record_path));
    kernel.options = record.dump();  // what a binary cache entry needs to launch it again
    KF_TRY(attach_abi(kernel, source));
    kernel.log = response.value("log", std::string());
    kernel.compile_ms = response.value("seconds", 0.0) * 1e3;
    return kernel;
  }

  Result<KernelBuild> build(const BuildInput& input, BinarySource& binaries) const override {
    KernelBuild out;
    const BinarySource::Compile compile_it = [&] { return compile(input.device, input.tpl, input.inst); };
    if (input.device.info().backend == kInterpreterBackend) {  // nothing compiled: nothing to keep
      out.origin = KernelOrigin::kCompiled;
      KF_TRY_ASSIGN(source, compile_it());
      KF_TRY_ASSIGN(kernel, input.device.load(source));
      out.kernel = std::move(kernel);
      out.binary = std::move(source);
      return out;
    }
    const json source = json::parse(input.inst.source);
    KF_TRY_ASSIGN(binary, binaries.obtain(input, compile_it, out));
    KF_TRY(attach_abi(binary, source));
    KF_TRY(binaries.admit(input, binary));
    auto kernel = input.device.load(binary);
    if (!kernel.ok() && out.cache_hit) {
      KF_TRY_ASSIGN(fresh, binaries.replace_refused(input, compile_it, kernel.error(), out));
      binary = std::move(fresh);
      KF_TRY(attach_abi(binary, source));
      kernel = input.device.load(binary);
    }
    if (!kernel.ok()) return kernel.error();
    out.kernel = std::move(*kernel);
    out.binary = std::move(binary);
    return out;
  }

  void add_identity(Hasher& h, const BuildInput&) const override { h.add("triton").add(triton_version()); }

  void key_compiler(BinaryCacheKey& key) const override {
    key.compiler = "triton";
    key.compiler_version = triton_version();
  }
};

}  // namespace

const TemplateKind& triton_kind() {
  static const TritonKind kind;
  return kind;
}

}  // namespace kforge
