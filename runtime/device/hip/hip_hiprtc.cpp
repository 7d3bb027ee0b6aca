// hipRTC compilation to a code object and the resource report from its metadata.
#include <chrono>
#include <sstream>

#include "runtime/device/hip/hip_api.hpp"
#include "runtime/device/hip/hip_backend.hpp"

namespace kforge {

namespace {

std::vector<std::string> split_options(const std::string& options) {
  std::vector<std::string> out;
  std::istringstream in(options);
  std::string o;
  while (in >> o) out.push_back(o);
  return out;
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

/// hipRTC from ROCm 5.2 (Debian 12) aborts the process on these targets (gfx950 came after it).
bool known_to_abort(const std::string& arch, int hip_version) {
  if (hip_version >= 60000000) return false;
  return arch.rfind("gfx94", 0) == 0 || arch.rfind("gfx95", 0) == 0 || arch.rfind("gfx11", 0) == 0 ||
         arch.rfind("gfx12", 0) == 0;
}

class HiprtcCompiler final : public Compiler {
 public:
  explicit HiprtcCompiler(std::string arch) : arch_(std::move(arch)) {}
  std::string name() const override { return "hiprtc"; }
  std::string version() const override {
    auto v = hiprtc_version();
    return v.ok() ? *v : "unavailable";
  }
  Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                 const std::string& options) override {
    KF_TRY_ASSIGN(out, hiprtc_compile(source, kernel_name, arch_, options));
    return std::move(out.kernel);
  }

 private:
  std::string arch_;
};

}  // namespace

ResourceReport amd_resource_report(const AmdKernelMetadata& k) {
  ResourceReport res;
  res.registers = k.vgpr_count < 0 ? -1 : k.vgpr_count + std::max<std::int64_t>(k.agpr_count, 0);
  res.local_mem_bytes = k.lds_bytes;
  res.private_mem_bytes = k.scratch_bytes;
  const std::int64_t spills =
      std::max<std::int64_t>(k.vgpr_spill_count, 0) + std::max<std::int64_t>(k.sgpr_spill_count, 0);
  res.spill_stores = spills;
  res.spill_loads = spills;
  res.max_block_threads = k.max_flat_workgroup_size;
  return res;
}

bool hiprtc_refuses(const std::string& arch) {
  const auto& rt = hip::RuntimeApi::get();
  return known_to_abort(arch, rt.ok() ? (*rt)->version_number() : 0);
}

Result<std::string> hiprtc_version() {
  const auto& rtc = hip::RtcApi::get();
  if (!rtc.ok()) return rtc.error();
  const auto& rt = hip::RuntimeApi::get();
  return "hipRTC (HIP " + (rt.ok() ? (*rt)->version() : std::string("unknown")) + ")";
}

Result<HiprtcOutput> hiprtc_compile(const std::string& source, const std::string& kernel_name,
                                    const std::string& arch, const std::string& options) {
  const auto& loaded = hip::RtcApi::get();
  if (!loaded.ok()) return loaded.error();
  const hip::RtcApi& api = **loaded;
  const auto& rt = hip::RuntimeApi::get();
  const int hip_version = rt.ok() ? (*rt)->version_number() : 0;
  if (known_to_abort(arch, hip_version)) {
    return Error{ErrorCode::kUnsupported,
                 "hipRTC of HIP " + (rt.ok() ? (*rt)->version() : std::string("?")) + " aborts when compiling for " +
                     arch + "; use ROCm 6 or newer for this target",
                 {}};
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> opts = {"--gpu-architecture=" + arch, "-O3", "-std=c++17"};
  for (auto& o : split_options(options)) opts.push_back(std::move(o));
  std::vector<const char*> argv;
  std::string joined;
  for (const auto& o : opts) {
    argv.push_back(o.c_str());
    joined += (joined.empty() ? "" : " ") + o;
  }
  hip::hiprtcProgram prog = nullptr;
  const std::string file = kernel_name + ".hip";
  if (auto r = api.hiprtcCreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr); r != 0) {
    return Error{ErrorCode::kCompile, std::string("hiprtcCreateProgram failed: ") + api.hiprtcGetErrorString(r), {}};
  }
  struct Guard {
    const hip::RtcApi& api;
    hip::hiprtcProgram p;
    ~Guard() { api.hiprtcDestroyProgram(&p); }
  } guard{api, prog};
  const hip::hiprtcResult rc = api.hiprtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  api.hiprtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) api.hiprtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (rc != 0) {
    return Error{ErrorCode::kCompile, "build failed for " + kernel_name + " (" + arch + "): " + first_error_line(log),
                 "options: " + joined + "\n" + log};
  }
  HiprtcOutput out;
  std::size_t size = 0;
  api.hiprtcGetCodeSize(prog, &size);
  out.kernel.binary.resize(size);
  out.kernel.format = BinaryFormat::kHsaco;
  if (size > 0) api.hiprtcGetCode(prog, reinterpret_cast<char*>(out.kernel.binary.data()));
  if (out.kernel.binary.empty()) {
    return Error{ErrorCode::kCompile, "hipRTC produced no code object for " + kernel_name + " (" + arch + ")", log};
  }
  ResourceReport& res = out.kernel.resources;
  auto co = read_amd_code_object(out.kernel.binary);
  if (co.ok()) {
    const AmdKernelMetadata* k = co->find(kernel_name);
    if (!k) {
      return Error{ErrorCode::kCompile,
                   "build failed for " + kernel_name + ": no kernel named '" + kernel_name + "' in the code object",
                   log};
    }
    out.metadata = *k;
    res = amd_resource_report(*k);
  } else if (co.error().code != ErrorCode::kUnsupported) {
    return Error{ErrorCode::kCompile, "hipRTC output for " + kernel_name + ": " + co.error().message, log};
  }
  out.kernel.kernel_name = kernel_name;
  out.kernel.log = std::move(log);
  out.kernel.options = joined;
  out.kernel.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::unique_ptr<Compiler> make_hiprtc_compiler(const std::string& arch) {
  return std::make_unique<HiprtcCompiler>(arch);
}

}  // namespace kforge
