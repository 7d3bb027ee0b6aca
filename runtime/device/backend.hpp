// The backend interface: a compiler turns source into a binary; a device
// identifies itself, holds buffers, loads binaries, launches and times.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "generator/instance.hpp"
#include "runtime/device/cache_flush.hpp"
#include "runtime/device/device_info.hpp"
#include "runtime/device/launch_abi.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge {

/// Resource usage a compiler reports for one kernel (fields it cannot report stay -1).
/// A compiler remark about one kernel's code (ptxas "(C7514) Potential
/// Performance Loss: ..."): its code, text, and whether it says the
/// kernel's tensor-core pipeline was serialized, which prunes it.
struct CompilerDiagnostic {
  std::string code;
  std::string message;
  bool serializes_tensor_ops = false;
  bool operator==(const CompilerDiagnostic&) const = default;
};

struct ResourceReport {
  std::int64_t registers = -1;
  std::int64_t local_mem_bytes = -1;    ///< static local/shared memory
  std::int64_t private_mem_bytes = -1;  ///< stack / private / scratch
  std::int64_t spill_stores = -1;
  std::int64_t spill_loads = -1;
  std::int64_t max_block_threads = -1;  ///< the most threads per block this kernel allows
  std::vector<CompilerDiagnostic> diagnostics;  ///< written to JSON only when there are any
  nlohmann::json to_json() const;
};

struct CompiledKernel {
  std::string kernel_name;
  /// The binary; empty while deferred (see fetch_binary).
  std::vector<std::uint8_t> binary;
  BinaryFormat format = BinaryFormat::kUnknown;
  /// How to launch a kernel another compiler laid out (a Triton kernel's
  /// block, shared memory, scratch, cluster); null for kforge's templates.
  std::shared_ptr<const LaunchAbi> abi;
  std::string log;
  std::string options;
  ResourceReport resources;
  double compile_ms = 0.0;
  /// The backend's built program, when its compiler keeps one: the same
  /// device's load() uses it directly instead of rebuilding from `binary`.
  std::shared_ptr<void> program;
  /// Produces the binary on demand where handing one out is costly (PoCL
  /// generates machine code for it, several times the build itself); unset
  /// when `binary` is filled at compile time.
  std::function<Result<std::vector<std::uint8_t>>()> fetch_binary;

  /// Fills `binary` through fetch_binary if it was deferred.
  Status ensure_binary() {
    if (!binary.empty() || !fetch_binary) return ok_status();
    KF_TRY_ASSIGN(b, fetch_binary());
    binary = std::move(b);
    return ok_status();
  }
};

/// How a compiler's machine code comes to be (Compiler::code_generation),
/// which decides whether processes that generate it ahead pay off
/// (tuner/tuner.hpp, code_generators).
struct CodeGeneration {
  /// Generated at a kernel's first launch, for its work-group size, rather
  /// than at compile time (PoCL).
  bool at_first_launch = false;
  /// Kept in an on-disk cache that every process shares (PoCL's kernel cache).
  bool cached_on_disk = false;
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  /// Compiles `source`; on failure the error's context holds the build log.
  virtual Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                         const std::string& options) = 0;
  /// Whether several kernels cost less built as one program
  /// (compile_combined) than one program each: where every program pays a
  /// fixed front-end cost (PoCL; generator/program_combiner.hpp).
  virtual bool combines_programs() const { return false; }
  /// How this compiler's machine code comes to be; NVRTC and hipRTC emit it
  /// at compile time.
  virtual CodeGeneration code_generation() const { return {}; }
  /// Builds `source`, the combined program of `instances`
  /// (combine_instances), as one program: one CompiledKernel per instance,
  /// in order, sharing it. An instance's binary, when asked for, is built
  /// from the instance's own source, so that a stored binary holds its
  /// kernel only. A failed build fails them all; the error's context holds the log.
  virtual Result<std::vector<CompiledKernel>> compile_combined(const std::string& source,
                                                               const std::vector<const Instance*>& instances,
                                                               const std::string& options) {
    (void)source, (void)instances, (void)options;
    return Error{ErrorCode::kUnsupported, name() + " builds one kernel per program", {}};
  }
};

/// Device memory; freed when destroyed.
class Buffer {
 public:
  virtual ~Buffer() = default;
  virtual std::size_t size() const = 0;
};

/// A kernel loaded on a device, ready to launch.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const std::string& name() const = 0;
  /// Limits the device reports for this loaded kernel (threads, local memory).
  virtual ResourceReport resources() const = 0;
  /// Each parameter's type as the kernel declares it ("int", "float",
  /// "float*"), where the backend reports it (OpenCL); empty elsewhere.
  virtual std::vector<std::string> parameter_types() const { return {}; }
};

struct KernelArg {
  enum class Kind { kBuffer, kInt32, kFloat32 };
  Kind kind = Kind::kInt32;
  Buffer* buffer = nullptr;
  std::int32_t i32 = 0;
  float f32 = 0.0f;
  static KernelArg of(Buffer& b) { KernelArg a; a.kind = Kind::kBuffer; a.buffer = &b; return a; }
  static KernelArg of(std::int32_t v) { KernelArg a; a.kind = Kind::kInt32; a.i32 = v; return a; }
  static KernelArg of(float v) { KernelArg a; a.kind = Kind::kFloat32; a.f32 = v; return a; }
};

/// Called once a launched kernel runs (Device::launch).
using OnRunning = std::function<void()>;

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;
  virtual Compiler& compiler() = 0;
  virtual Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) = 0;
  virtual Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) = 0;
  virtual Status write(Buffer& dst, const void* src, std::size_t bytes) = 0;
  virtual Status read(const Buffer& src, void* dst, std::size_t bytes) = 0;
  /// Launches and waits for completion. Returns the kernel's device time in
  /// milliseconds from profiling events (start to end of the kernel alone).
  /// `on_running`, when set, is called on the calling thread once the kernel
  /// runs: its machine code exists by then. PoCL generates a kernel's machine
  /// code for its work-group size at its first launch, before the command
  /// runs (seconds for a large kernel), so a supervisor can tell that code
  /// generation from the kernel's own time. Where code exists once the
  /// kernel is loaded (NVRTC, hipRTC), `on_running` comes first.
  virtual Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args,
                                const LaunchGeometry& geometry, const OnRunning& on_running = {}) = 0;
  /// Enqueues the kernel where this thread's launches go (the device's
  /// queue or stream, or the caller's stream in use) and returns without
  /// waiting: no events, no timing. What can be checked first (arguments,
  /// geometry, resources) is; a kernel that fails while it runs is reported
  /// by the next call that waits. Later reads and writes of this device's
  /// buffers wait for it. A production launch (Lookup::enqueue) is this.
  virtual Status enqueue(Kernel& kernel, const std::vector<KernelArg>& args,
                         const LaunchGeometry& geometry) = 0;
  /// Waits until everything enqueued on this device has finished; the
  /// first failure of a kernel that ran since is returned.
  virtual Status synchronize() = 0;
  /// Evicts the kernel's data from the caches so the next timed launch
  /// starts cold: writes a buffer larger than the last-level cache (kFill),
  /// or on a CPU device whose buffers are host memory, evicts those buffers
  /// line by line (kEvict, where they hold no more than a fill would write).
  virtual Status flush_cache() = 0;
  /// How flush_cache() flushes and how much each fill writes, which a sweep
  /// records with its protocol.
  virtual CacheFlush cache_flush() const { return {CacheFlushMethod::kFill, cache_flush_bytes(info())}; }
  /// Reads this device's clocks (owned by the device, made on first call), or
  /// nullptr where they cannot be read (no NVML, no cpufreq): not an error.
  virtual ClockReader* clock_reader() { return nullptr; }
  /// Whether launch() times the kernel itself. False for a device that
  /// runs kernels only to check what they compute (the Triton interpreter):
  /// the tuner validates its candidates and never times them.
  virtual bool times_kernels() const { return true; }
};

}  // namespace kforge
