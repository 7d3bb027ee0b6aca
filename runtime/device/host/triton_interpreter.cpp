// The Triton interpreter as a device (triton_interpreter.hpp).
#include "runtime/device/host/triton_interpreter.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "runtime/device/gpu/gpu_launch.hpp"
#include "runtime/device/host/host_cpus.hpp"
#include "runtime/device/host/host_memory.hpp"
#include "runtime/kinds/triton_binary.hpp"
#include "runtime/kinds/triton_helpers.hpp"
#include "runtime/platform/scratch_dir.hpp"

namespace kforge {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

/// Poisoned elements the interpreter puts before and after every array:
/// wider than any tile a corpus kernel writes past an unmasked edge.
constexpr int kGuardElements = 1024;

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(std::size_t n) : bytes(n) {}
  std::size_t size() const override { return bytes.size(); }
  std::vector<unsigned char> bytes;
};

/// What a launch needs: the instance's request (constexprs, the kernel's
/// name), the kernel's Python source and its ABI (parameters, argument map).
struct Interpretable {
  json request;
  std::string kernel_text;
  std::shared_ptr<const LaunchAbi> abi;
};

class InterpretedKernel final : public Kernel {
 public:
  InterpretedKernel(std::string name, Interpretable what) : name_(std::move(name)), what_(std::move(what)) {}
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return {}; }
  const Interpretable& what() const { return what_; }

 private:
  std::string name_;
  Interpretable what_;
};

/// The interpreter compiles nothing: a kforge C template reaching it is refused.
class NoCompiler final : public Compiler {
 public:
  std::string name() const override { return "triton-interpret"; }
  std::string version() const override { return triton_version(); }
  Result<CompiledKernel> compile(const std::string&, const std::string& kernel_name, const std::string&) override {
    return Error{ErrorCode::kUnsupported,
                 "the Triton interpreter runs Triton templates only; " + kernel_name + " is not one", {}};
  }
};

DeviceInfo interpreter_info() {
  DeviceInfo d;
  d.selector = std::string(kInterpreterBackend) + ":0";
  d.backend = kInterpreterBackend;
  d.vendor = "Triton";
  d.name = "Triton interpreter";
  d.arch = "interpret";
  d.device_type = DeviceType::kCpu;
  const auto memory = host_available_memory();
  d.global_mem_bytes = d.max_alloc_bytes = memory ? static_cast<std::int64_t>(memory->available_bytes) : 0;
  // Constraints are evaluated with an H100 SXM's limits, the corpus's
  // first target, so that the configurations checked are those a tune
  // there tries (NUM_SMS <= compute_units).
  d.compute_units = 132;
  d.local_mem_bytes = 48 * 1024;
  d.max_shared_bytes = 227 * 1024;
  d.max_block_threads = 1024;
  d.simd_width = 32;
  d.fp64 = true;
  d.compiler = "triton-interpret";
  d.host_cpu = host_cpu_model();
  return d;
}

/// The kernel's arguments as the interpreter's request lists them, each
/// array in a file of raw elements under `dir`; `files` gets each array's
/// buffer and file, to read back.
Result<json> request_arguments(const LaunchAbi& abi, const std::vector<KernelArg>& args, const fs::path& dir,
                               std::vector<std::pair<HostBuffer*, fs::path>>& files) {
  json out = json::array();
  for (std::size_t i = 0; i < abi.parameters.size(); ++i) {
    const AbiParameter& p = abi.parameters[i];
    if (i < abi.argument_map.size() && abi.argument_map[i].workspace >= 0) {
      // The interpreter makes it: zeros, or 0xFF bytes that show a read before a write.
      const AbiWorkspace& w = abi.workspaces[static_cast<std::size_t>(abi.argument_map[i].workspace)];
      out.push_back({{"name", p.name}, {"kind", "workspace"}, {"dtype", p.type.substr(1)},
                     {"elements", w.elements}, {"zeroed", w.zeroed}});
      continue;
    }
    if (!p.pointer) {
      const bool integer = args[i].kind == KernelArg::Kind::kInt32;
      out.push_back({{"name", p.name}, {"kind", "scalar"}, {"dtype", p.type},
                     {"value", integer ? json(args[i].i32) : json(args[i].f32)}});
      continue;
    }
    auto* buffer = dynamic_cast<HostBuffer*>(args[i].buffer);
    if (!buffer) return Error::bad_input(p.name + ": not a buffer of the Triton interpreter device");
    const fs::path file = dir / ("arg" + std::to_string(i) + ".bin");
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(buffer->bytes.data()), static_cast<std::streamsize>(buffer->size()));
    files.emplace_back(buffer, file);
    out.push_back({{"name", p.name}, {"kind", "array"}, {"raw", file.string()}, {"dtype", p.type.substr(1)},
                   {"out", true}});
  }
  return out;
}

Status read_back(const std::vector<std::pair<HostBuffer*, fs::path>>& files) {
  for (const auto& [buffer, file] : files) {
    std::ifstream in(file, std::ios::binary);
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() != buffer->size())
      return Error{ErrorCode::kLaunch, file.string() + ": the interpreter wrote back " + std::to_string(bytes.size()) +
                                           " bytes of " + std::to_string(buffer->size()), {}};
    buffer->bytes = std::move(bytes);
  }
  return ok_status();
}

class InterpreterDevice final : public Device {
 public:
  InterpreterDevice() : info_(interpreter_info()) {
    info_.compiler_version = info_.runtime_version = triton_version();
  }
  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return compiler_; }
  bool times_kernels() const override { return false; }

  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override {
    if (compiled.format != BinaryFormat::kTritonSource || !compiled.abi)
      return Error{ErrorCode::kUnsupported, compiled.kernel_name + ": the Triton interpreter loads Triton sources only", {}};
    const std::string text(compiled.binary.begin(), compiled.binary.end());
    json both = json::parse(text, nullptr, false);
    if (both.is_discarded() || !both.contains("request") || !both.contains("kernel_text"))
      return Error::bad_input(compiled.kernel_name + ": not an interpretable Triton kernel");
    return std::unique_ptr<Kernel>(std::make_unique<InterpretedKernel>(
        compiled.kernel_name, Interpretable{both["request"], both["kernel_text"].get<std::string>(), compiled.abi}));
  }

  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    return std::unique_ptr<Buffer>(std::make_unique<HostBuffer>(bytes));
  }
  Status write(Buffer& dst, const void* src, std::size_t bytes) override {
    KF_TRY_ASSIGN(b, host(dst, bytes));
    if (bytes) std::memcpy(b->bytes.data(), src, bytes);
    return ok_status();
  }
  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    KF_TRY_ASSIGN(b, host(const_cast<Buffer&>(src), bytes));
    if (bytes) std::memcpy(dst, b->bytes.data(), bytes);
    return ok_status();
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry,
                        const OnRunning& on_running) override {
    auto* k = dynamic_cast<InterpretedKernel*>(&kernel);
    if (!k) return Error::bad_input(kernel.name() + ": not a kernel of the Triton interpreter device");
    const Interpretable& what = k->what();
    KF_TRY_ASSIGN(kernel_args, abi_arguments(*what.abi, args, k->name()));
    KF_TRY(check_abi_arguments(*what.abi, kernel_args, k->name()));
    KF_TRY_ASSIGN(path, make_scratch_dir("kforge-interpret"));
    const ScratchDir dir{path};
    std::ofstream(dir.path / "kernel.py") << what.kernel_text;
    std::vector<std::pair<HostBuffer*, fs::path>> files;
    KF_TRY_ASSIGN(arguments, request_arguments(*what.abi, kernel_args, dir.path, files));
    const json request = {{"source_path", (dir.path / "kernel.py").string()},
                          {"kernel", what.request["kernel"]},
                          {"args", arguments},
                          {"constexprs", what.request["constexprs"]},
                          {"grid", {geometry.grid[0], geometry.grid[1], geometry.grid[2]}},
                          {"guard_elements", kGuardElements}};
    if (on_running) on_running();
    KF_TRY_ASSIGN(response, run_triton_helper("interpret", request, dir.path, ErrorCode::kLaunch));
    if (!response.value("ok", false))
      return Error{ErrorCode::kLaunch, response.value("error", std::string("the interpreter failed")), {}};
    KF_TRY(read_back(files));
    return response.value("seconds", 0.0) * 1e3;
  }
  Status enqueue(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& geometry) override {
    auto ran = launch(kernel, args, geometry, {});
    if (!ran.ok()) return ran.error();
    return ok_status();
  }
  Status synchronize() override { return ok_status(); }
  Status flush_cache() override { return ok_status(); }
  CacheFlush cache_flush() const override { return {CacheFlushMethod::kEvict, 0}; }

 private:
  static Result<HostBuffer*> host(Buffer& b, std::size_t bytes) {
    auto* h = dynamic_cast<HostBuffer*>(&b);
    if (!h) return Error::bad_input("not a buffer of the Triton interpreter device");
    if (bytes > h->size())
      return Error::bad_input(std::to_string(bytes) + " bytes do not fit a buffer of " + std::to_string(h->size()));
    return h;
  }

  DeviceInfo info_;
  NoCompiler compiler_;
};

}  // namespace

std::vector<DeviceInfo> list_interpreter_devices() { return {interpreter_info()}; }

Result<std::unique_ptr<Device>> open_interpreter_device(std::size_t index) {
  if (index != 0) return Error::not_found("the Triton interpreter is one device, interpret:0");
  if (const std::string& why = triton_missing(); !why.empty()) return Error{ErrorCode::kUnsupported, why, {}};
  return std::unique_ptr<Device>(std::make_unique<InterpreterDevice>());
}

Result<CompiledKernel> interpreted_kernel(const std::string& request, const std::string& kernel_text) {
  const json source = json::parse(request, nullptr, false);
  if (source.is_discarded() || !source.contains("arguments") || !source.contains("signature"))
    return Error::bad_input("not a Triton instance's request");
  json parameters = json::array(), metadata = json::object();
  for (const auto& a : source["arguments"]) {
    const std::string name = a["name"].get<std::string>();
    parameters.push_back({{"name", name}, {"type", source["signature"][name]}});
  }
  metadata["name"] = source["kernel"];
  metadata["num_warps"] = source["options"].value("num_warps", 4);
  metadata["triton_version"] = triton_version();
  KF_TRY_ASSIGN(abi, triton_launch_abi(metadata, parameters));
  abi.scratch_pointers = false;  // the interpreter allocates no scratch
  apply_triton_arguments(abi, source);
  CompiledKernel k;
  k.kernel_name = source["kernel"].get<std::string>();
  k.format = BinaryFormat::kTritonSource;
  const std::string both = json{{"request", source}, {"kernel_text", kernel_text}}.dump();
  k.binary.assign(both.begin(), both.end());
  k.abi = std::make_shared<const LaunchAbi>(std::move(abi));
  return k;
}

}  // namespace kforge
