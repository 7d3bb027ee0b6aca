// NVRTC compilation to a cubin and the resource report from ptxas' log.
#include <chrono>
#include <sstream>

#include "runtime/device/cuda/cuda_api.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/cuda/cuda_ptxas_log.hpp"

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
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos) return line;
  }
  return log.substr(0, log.find('\n'));
}

class NvrtcProgramGuard {
 public:
  NvrtcProgramGuard(const cuda::NvrtcApi& api, cuda::nvrtcProgram p) : api_(api), p_(p) {}
  ~NvrtcProgramGuard() { api_.nvrtcDestroyProgram(&p_); }
  NvrtcProgramGuard(const NvrtcProgramGuard&) = delete;
  NvrtcProgramGuard& operator=(const NvrtcProgramGuard&) = delete;

 private:
  const cuda::NvrtcApi& api_;
  cuda::nvrtcProgram p_;
};

class NvrtcCompiler final : public Compiler {
 public:
  explicit NvrtcCompiler(std::string arch) : arch_(std::move(arch)) {}
  std::string name() const override { return "nvrtc"; }
  std::string version() const override {
    auto v = nvrtc_version();
    return v.ok() ? *v : "unavailable";
  }
  Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                 const std::string& options) override {
    KF_TRY_ASSIGN(out, nvrtc_compile(source, kernel_name, arch_, options));
    return std::move(out.kernel);
  }

 private:
  std::string arch_;
};

}  // namespace

Result<std::string> nvrtc_version() {
  const auto& api = cuda::NvrtcApi::get();
  if (!api.ok()) return api.error();
  return (*api)->version();
}

Result<std::vector<std::string>> nvrtc_supported_archs() {
  const auto& api = cuda::NvrtcApi::get();
  if (!api.ok()) return api.error();
  int n = 0;
  if ((*api)->nvrtcGetNumSupportedArchs(&n) != 0 || n <= 0) return std::vector<std::string>{};
  std::vector<int> archs(static_cast<std::size_t>(n));
  (*api)->nvrtcGetSupportedArchs(archs.data());
  std::vector<std::string> out;
  for (int a : archs) out.push_back("sm_" + std::to_string(a));
  return out;
}

Result<NvrtcOutput> nvrtc_compile(const std::string& source, const std::string& kernel_name,
                                  const std::string& arch, const std::string& options) {
  const auto& loaded = cuda::NvrtcApi::get();
  if (!loaded.ok()) return loaded.error();
  const cuda::NvrtcApi& api = **loaded;
  const auto t0 = std::chrono::steady_clock::now();

  std::vector<std::string> opts = {"-arch=" + arch, "-std=c++17", "--ptxas-options=-v"};
  // NVRTC 12.9 and later may answer from its own cache, and a cached answer
  // carries no ptxas report: on an H200 every candidate compiled a second
  // time came back without registers, spills or shared memory, so none was
  // pruned. kforge's binary cache keeps the report with the binary instead.
  if (api.at_least(12, 9)) opts.push_back("--no-cache");
  for (auto& o : split_options(options)) opts.push_back(std::move(o));
  std::vector<const char*> argv;
  std::string joined;
  for (const auto& o : opts) {
    argv.push_back(o.c_str());
    joined += (joined.empty() ? "" : " ") + o;
  }

  cuda::nvrtcProgram prog = nullptr;
  const std::string file = kernel_name + ".cu";
  if (auto r = api.nvrtcCreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr); r != 0) {
    return Error{ErrorCode::kCompile, std::string("nvrtcCreateProgram failed: ") + api.nvrtcGetErrorString(r), {}};
  }
  NvrtcProgramGuard guard(api, prog);
  const cuda::nvrtcResult rc = api.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  api.nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) api.nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (rc != 0) {
    return Error{ErrorCode::kCompile,
                 "build failed for " + kernel_name + " (" + arch + "): " + first_error_line(log),
                 "options: " + joined + "\n" + log};
  }
  NvrtcOutput out;
  std::size_t cubin_size = 0;
  api.nvrtcGetCUBINSize(prog, &cubin_size);
  out.kernel.binary.resize(cubin_size);
  out.kernel.format = BinaryFormat::kCubin;
  if (cubin_size > 0) api.nvrtcGetCUBIN(prog, reinterpret_cast<char*>(out.kernel.binary.data()));
  std::size_t ptx_size = 0;
  api.nvrtcGetPTXSize(prog, &ptx_size);
  out.ptx.resize(ptx_size);
  if (ptx_size > 0) api.nvrtcGetPTX(prog, out.ptx.data());
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  if (out.kernel.binary.empty()) {
    return Error{ErrorCode::kCompile, "NVRTC produced no cubin for " + kernel_name + " (" + arch + ")", log};
  }
  if (out.ptx.find(".entry " + kernel_name + "(") == std::string::npos &&
      out.ptx.find(".entry " + kernel_name + "\n") == std::string::npos) {
    return Error{ErrorCode::kCompile,
                 "build failed for " + kernel_name + ": no kernel named '" + kernel_name + "' in the program",
                 log};
  }

  out.dynamic_shared_bytes = ptx_global_value(out.ptx, "kf_dynamic_shared_bytes").value_or(0);
  const PtxasReport rep = parse_ptxas_log(log, kernel_name);
  ResourceReport& res = out.kernel.resources;
  res.registers = rep.registers;
  res.local_mem_bytes = rep.shared_bytes < 0 ? -1 : rep.shared_bytes + out.dynamic_shared_bytes;
  res.private_mem_bytes = rep.stack_bytes;
  res.spill_stores = rep.spill_store_bytes;
  res.spill_loads = rep.spill_load_bytes;
  res.max_block_threads = ptx_max_threads(out.ptx, kernel_name);
  res.diagnostics = parse_ptxas_diagnostics(log);
  out.kernel.kernel_name = kernel_name;
  out.kernel.log = std::move(log);
  out.kernel.options = joined;
  out.kernel.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch) {
  return std::make_unique<NvrtcCompiler>(arch);
}

}  // namespace kforge
