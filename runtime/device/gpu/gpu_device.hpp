// The device of the CUDA and HIP backends, written once over a driver-traits
// type (CudaDriver in cuda_backend.cpp, HipDriver in hip_backend.cpp) that
// supplies the driver's calls and their names: buffers, module load with
// dynamic shared memory, launches timed with events, the cache flush,
// sticky errors, the hooks library calls use, and kernels another compiler
// laid out (a LaunchAbi: Triton's block, shared memory, scratch, clusters,
// workspaces).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/device/backend.hpp"
#include "runtime/device/foreign_memory.hpp"
#include "runtime/device/gpu/gpu_launch.hpp"
#include "runtime/device/kernel_workspaces.hpp"
#include "runtime/device/launch_check.hpp"
#include "runtime/device/sticky_error.hpp"
#include "runtime/libraries/library_kernel.hpp"

namespace kforge {

/// The names a driver's calls go by in error messages.
struct DriverCallNames {
  const char* make_current;  ///< cuCtxSetCurrent, hipSetDevice
  const char* load_module;
  const char* allocate;
  const char* copy_in;
  const char* copy_out;
  const char* memset32;
  const char* launch;
  const char* event_create;
  const char* event_record;
  const char* elapsed;
  /// What the driver would answer a launch past the kernel's thread limit.
  const char* invalid_value_at_launch;
};

/// What a backend makes of a loaded kernel: its resource report and the
/// dynamic shared bytes every launch passes.
struct LoadedResources {
  ResourceReport resources;
  int dynamic_shared = 0;
};

// A Driver is a small copyable value (the entry-point table and the device's
// handles) with: the types Code, DevicePtr, Module, Function, Stream, Event;
// kSuccess, kErrorInvalidValue, kBackend ("CUDA") and kCalls (DriverCallNames);
// error_text(code) and failure_of(code); and the calls below, each returning
// a Code: make_current, allocate, free, copy_in, copy_out, memset32,
// synchronize, load_module, unload_module, get_function, get_global, launch,
// create_event, destroy_event, record_event, synchronize_event, elapsed_ms,
// destroy_stream; plus kernel_resources (Result<LoadedResources>), release()
// at the device's end and open_clock_reader(); kClusters, and where it is
// true launch_cluster (a launch in clusters of CTAs along x).

/// Device memory the device allocated and frees, or (borrowed) memory a
/// caller owns (ForeignMemory::borrow), which it leaves alone.
template <class Driver>
class GpuBuffer final : public Buffer {
 public:
  using DevicePtr = typename Driver::DevicePtr;
  GpuBuffer(Driver driver, DevicePtr ptr, std::size_t size, bool borrowed = false)
      : driver_(driver), ptr_(ptr), size_(size), borrowed_(borrowed) {}
  ~GpuBuffer() override {
    if (ptr_ && !borrowed_) driver_.free(ptr_);
  }
  std::size_t size() const override { return size_; }
  DevicePtr ptr() const { return ptr_; }

 private:
  Driver driver_;
  DevicePtr ptr_;
  std::size_t size_;
  bool borrowed_;
};

template <class Driver>
class GpuKernel final : public Kernel {
 public:
  GpuKernel(Driver driver, typename Driver::Module module, typename Driver::Function fn, std::string name,
            LoadedResources loaded, std::shared_ptr<const LaunchAbi> abi)
      : driver_(driver),
        module_(module),
        fn_(fn),
        name_(std::move(name)),
        loaded_(std::move(loaded)),
        abi_(std::move(abi)) {}
  ~GpuKernel() override {
    scratch_.clear();
    workspaces.clear();
    driver_.unload_module(module_);
  }
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return loaded_.resources; }
  typename Driver::Function fn() const { return fn_; }
  int dynamic_shared() const { return loaded_.dynamic_shared; }
  /// The foreign ABI it is launched by; null for kforge's templates.
  const LaunchAbi* abi() const { return abi_.get(); }
  /// The scratch buffers its ABI asks for, for the launches on one stream,
  /// grown to the largest grid launched there.
  struct Scratch {
    std::unique_ptr<Buffer> global, profile;
  };
  /// `stream`'s scratch: one pair per stream, as the workspaces, because
  /// launches on two streams may overlap. One thread launches on a stream.
  Scratch& scratch_for(std::uintptr_t stream) {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    return scratch_[stream];  // std::map: the reference outlives later insertions
  }
  /// The workspaces its ABI asks for, one set per stream.
  KernelWorkspaces workspaces;

 private:
  std::mutex scratch_mutex_;
  std::map<std::uintptr_t, Scratch> scratch_;
  Driver driver_;
  typename Driver::Module module_;
  typename Driver::Function fn_;
  std::string name_;
  LoadedResources loaded_;
  std::shared_ptr<const LaunchAbi> abi_;
};

template <class Driver>
class GpuDevice final : public Device, public ForeignMemory {
 public:
  using Code = typename Driver::Code;
  using DevicePtr = typename Driver::DevicePtr;
  using Buffer_ = GpuBuffer<Driver>;
  using Kernel_ = GpuKernel<Driver>;

  /// `ordinal`: the driver's index of the device, as DLPack's device_id names it.
  GpuDevice(Driver driver, typename Driver::Stream stream, DeviceInfo info,
            std::unique_ptr<Compiler> compiler, int ordinal)
      : driver_(driver),
        stream_(stream),
        info_(std::move(info)),
        compiler_(std::move(compiler)),
        ordinal_(ordinal) {}
  ~GpuDevice() override {
    flush_buffer_.reset();
    driver_.make_current();
    if (start_) driver_.destroy_event(start_);
    if (end_) driver_.destroy_event(end_);
    if (stream_) driver_.destroy_stream(stream_);
    driver_.release();
  }

  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return *compiler_; }

  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override {
    KF_TRY(enter());
    const std::string& name = compiled.kernel_name;
    if (compiled.abi) KF_TRY(admit_abi(compiled));
    typename Driver::Module module{};
    if (Code r = driver_.load_module(&module, compiled.binary.data()); r != Driver::kSuccess) {
      return note(error(std::string(Driver::kCalls.load_module) + " (" + name + ")", r, ErrorCode::kCompile));
    }
    auto loaded = describe_kernel(module, compiled);
    if (!loaded.ok()) {
      driver_.unload_module(module);
      return note(loaded.error());
    }
    return std::unique_ptr<Kernel>(
        std::make_unique<Kernel_>(driver_, module, loaded->first, name, loaded->second, compiled.abi));
  }

  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    KF_TRY(enter());
    DevicePtr p{};
    if (Code r = driver_.allocate(&p, std::max<std::size_t>(bytes, 1)); r != Driver::kSuccess) {
      return note(error(std::string(Driver::kCalls.allocate) + "(" + std::to_string(bytes) + " bytes)", r,
                        ErrorCode::kResource));
    }
    return std::unique_ptr<Buffer>(std::make_unique<Buffer_>(driver_, p, bytes));
  }

  Status write(Buffer& dst, const void* src, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kWrite, bytes, dst.size()));
    KF_TRY(enter());
    KF_TRY(wait_for_enqueued());
    return check(driver_.copy_in(static_cast<Buffer_&>(dst).ptr(), src, bytes), Driver::kCalls.copy_in);
  }

  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kRead, bytes, src.size()));
    KF_TRY(enter());
    KF_TRY(wait_for_enqueued());
    return check(driver_.copy_out(dst, static_cast<const Buffer_&>(src).ptr(), bytes),
                 Driver::kCalls.copy_out);
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->run(args, g, on_running);
    if (on_running) on_running();  // the code exists once loaded
    auto& k = static_cast<Kernel_&>(kernel);
    std::vector<KernelArg> mapped;
    KF_TRY(check_launch(k, args, g, mapped));
    KF_TRY(enter());
    const auto& kernel_args = mapped.empty() ? args : mapped;
    KF_TRY_ASSIGN(ms, timed(k.name() + " failed while running", [&] { return launch_on_stream(k, kernel_args, g); }));
    if (k.abi() && !k.abi()->workspaces.empty())
      KF_TRY(k.workspaces.check_zeroed(stream_key(), k.abi()->workspaces, workspace_memory(), k.name()));
    return ms;
  }

  Status enqueue(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& g) override {
    if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->enqueue(args, g);
    auto& k = static_cast<Kernel_&>(kernel);
    std::vector<KernelArg> mapped;
    KF_TRY(check_launch(k, args, g, mapped));
    KF_TRY(enter());
    KF_TRY(launch_on_stream(k, mapped.empty() ? args : mapped, g));
    enqueued_ = true;
    return ok_status();
  }

  Status flush_cache() override {
    KF_TRY(enter());
    if (!flush_buffer_) {
      KF_TRY_ASSIGN(buf, allocate(cache_flush().bytes));
      flush_buffer_ = std::move(buf);
    }
    ++flush_pattern_;
    auto& b = static_cast<Buffer_&>(*flush_buffer_);
    KF_TRY(check(driver_.memset32(b.ptr(), flush_pattern_, b.size() / 4),
                 std::string("cache flush (") + Driver::kCalls.memset32 + ")"));
    return check(driver_.synchronize(), "cache flush");
  }

  ClockReader* clock_reader() override {
    if (!clocks_tried_) {
      clocks_ = driver_.open_clock_reader(info_);
      clocks_tried_ = true;
    }
    return clocks_.get();
  }

  /// A library's work on this device's stream, timed as a launch is.
  Result<double> timed_call(const std::function<Status(void*)>& enqueue) {
    KF_TRY(enter());
    return timed("a library call failed while running", [&] { return enqueue(stream()); });
  }
  /// A library's work on this device's stream, not waited for (enqueue).
  Status enqueued_call(const std::function<Status(void*)>& enqueue) {
    KF_TRY(enter());
    KF_TRY(enqueue(stream()));
    enqueued_ = true;
    return ok_status();
  }
  /// This device current on the calling thread, as a library call needs it.
  Status make_current() { return enter(); }

  Result<std::unique_ptr<Buffer>> borrow(std::uintptr_t address, std::size_t bytes, int ordinal) override {
    if (address == 0 || bytes == 0) {
      return Error::bad_input("borrowed device memory must be a non-null address and a nonempty range");
    }
    if (ordinal != ordinal_) {
      return Error::bad_input("memory of " + std::string(Driver::kBackend) + " device " +
                              std::to_string(ordinal) + " passed to " + info_.selector + " (" + info_.name +
                              ")");
    }
    return std::unique_ptr<Buffer>(std::make_unique<Buffer_>(driver_, as_device_ptr(address), bytes, true));
  }
  void use_caller_stream(std::uintptr_t stream) override { caller_stream_ = {this, as_stream(stream)}; }
  void use_own_stream() override { caller_stream_ = {}; }
  Status synchronize() override {
    KF_TRY(enter());
    enqueued_ = false;
    return check(driver_.synchronize(), "waiting for the device");
  }

 private:
  Error error(const std::string& what, Code r, ErrorCode code = ErrorCode::kLaunch) const {
    return driver_error(what, driver_.error_text(r), driver_.failure_of(r), code);
  }
  Status check(Code r, const std::string& what) {
    if (r == Driver::kSuccess) return ok_status();
    return note(error(what, r));
  }
  /// Makes the device current on this thread; after a sticky error every
  /// call fails with it again.
  Status enter() {
    KF_TRY(sticky_.check());
    return check(driver_.make_current(), Driver::kCalls.make_current);
  }
  Error note(Error e) { return sticky_.note(std::move(e)); }

  /// What is checked before anything is enqueued: the geometry against the
  /// limits, and for a foreign kernel its block and arguments against its
  /// ABI. Where the ABI maps the caller's arguments to the kernel's (a
  /// Triton template), `mapped` receives the kernel's, built once here.
  Status check_launch(const Kernel_& k, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                      std::vector<KernelArg>& mapped) const {
    KF_TRY(check_launch_geometry(k, g, {}, {.block_threads = Driver::kCalls.invalid_value_at_launch}));
    if (!k.abi()) return ok_status();
    KF_TRY(check_abi_block(*k.abi(), g, k.name()));
    if (k.abi()->argument_map.empty()) return check_abi_arguments(*k.abi(), args, k.name());
    KF_TRY_ASSIGN(kernel_args, abi_arguments(*k.abi(), args, k.name()));
    mapped = std::move(kernel_args);
    return check_abi_arguments(*k.abi(), mapped, k.name());
  }

  /// A foreign kernel's binary before it loads: its parameter table agrees
  /// with its ABI, and the ABI asks for nothing this driver lacks.
  Status admit_abi(const CompiledKernel& compiled) const {
    if (compiled.abi->cluster_ctas > 1 && !Driver::kClusters) {
      return Error{ErrorCode::kUnsupported,
                   compiled.kernel_name + " is compiled for clusters of " +
                       std::to_string(compiled.abi->cluster_ctas) + " CTAs, which " + Driver::kBackend +
                       " devices do not launch",
                   {}};
    }
    return check_recorded_parameters(*compiled.abi, compiled.format, compiled.binary, compiled.kernel_name);
  }

  /// `buffer` holding at least `bytes` (kept from an earlier launch where
  /// large enough); its device address, or null for 0 bytes.
  Result<DevicePtr> scratch(std::unique_ptr<Buffer>& buffer, std::int64_t bytes) {
    if (bytes <= 0) return DevicePtr{};
    if (!buffer || buffer->size() < static_cast<std::size_t>(bytes)) {
      // Launches enqueued earlier may still use the smaller buffer.
      if (buffer) KF_TRY(check(driver_.synchronize(), "waiting before a scratch buffer grows"));
      buffer.reset();
      KF_TRY_ASSIGN(b, allocate(static_cast<std::size_t>(bytes)));
      buffer = std::move(b);
    }
    return static_cast<Buffer_&>(*buffer).ptr();
  }

  /// The pointers a foreign ABI appends after the arguments (Triton's
  /// global and profile scratch, sized for this grid); none for kforge's.
  Result<std::vector<DevicePtr>> trailing_pointers(Kernel_& k, const LaunchGeometry& g) {
    const LaunchAbi* abi = k.abi();
    if (!abi || !abi->scratch_pointers) return std::vector<DevicePtr>{};
    const std::int64_t programs = g.grid[0] * g.grid[1] * g.grid[2];
    const auto padded = [](std::int64_t bytes, std::int64_t align) { return (bytes + align - 1) / align * align; };
    auto& own = k.scratch_for(stream_key());
    KF_TRY_ASSIGN(global, scratch(own.global, scratch_bytes(padded(abi->global_scratch_bytes, abi->global_scratch_align),
                                                            programs, abi->cluster_ctas)));
    KF_TRY_ASSIGN(profile, scratch(own.profile, scratch_bytes(padded(abi->profile_scratch_bytes,
                                                                      abi->profile_scratch_align),
                                                               programs, abi->cluster_ctas)));
    return std::vector<DevicePtr>{global, profile};
  }

  /// How the kernels' workspaces are made: this device's memory, zeroed
  /// with the driver's memset (whole words: KernelWorkspaces allocates them so).
  WorkspaceMemory workspace_memory() {
    return {[this](std::size_t bytes) { return allocate(bytes); },
            [this](Buffer& b) {
              return check(driver_.memset32(static_cast<Buffer_&>(b).ptr(), 0, b.size() / 4),
                           std::string("zeroing a workspace (") + Driver::kCalls.memset32 + ")");
            },
            [this](const Buffer& b, void* dst, std::size_t bytes) { return read(b, dst, bytes); }};
  }
  std::uintptr_t stream_key() const { return reinterpret_cast<std::uintptr_t>(stream()); }

  /// `args` with the kernel's workspaces for this thread's stream in their
  /// slots (check_launch left those empty), made at the first launch on it.
  Result<std::vector<KernelArg>> with_workspaces(Kernel_& k, const std::vector<KernelArg>& args) {
    KF_TRY_ASSIGN(buffers, k.workspaces.for_stream(stream_key(), k.abi()->workspaces, workspace_memory()));
    std::vector<KernelArg> out = args;
    const auto& map = k.abi()->argument_map;
    for (std::size_t i = 0; i < map.size() && i < out.size(); ++i)
      if (map[i].workspace >= 0) out[i] = KernelArg::of(*buffers[static_cast<std::size_t>(map[i].workspace)]);
    return out;
  }

  /// The kernel on this thread's stream with the kernel's own arguments
  /// (check_launch mapped them), not waited for.
  Status launch_on_stream(Kernel_& k, const std::vector<KernelArg>& caller_args, const LaunchGeometry& g) {
    std::vector<KernelArg> filled;
    if (k.abi() && !k.abi()->workspaces.empty()) {
      KF_TRY_ASSIGN(with, with_workspaces(k, caller_args));
      filled = std::move(with);
    }
    const auto& args = filled.empty() ? caller_args : filled;
    KF_TRY_ASSIGN(trailing, trailing_pointers(k, g));
    auto params = PackedArgs<DevicePtr>::template of<Buffer_>(args, trailing);
    const unsigned shared = static_cast<unsigned>(k.dynamic_shared());
    Code r{};
    if constexpr (Driver::kClusters) {
      r = k.abi() && k.abi()->cluster_ctas > 1
              ? driver_.launch_cluster(k.fn(), g, shared, stream(), params.params(), k.abi()->cluster_ctas)
              : driver_.launch(k.fn(), g, shared, stream(), params.params());
    } else {
      r = driver_.launch(k.fn(), g, shared, stream(), params.params());
    }
    if (r == Driver::kSuccess) return ok_status();
    // Invalid value at launch: block or shared memory beyond what the device allows.
    return note(error(std::string(Driver::kCalls.launch) + "(" + k.name() + ")", r,
                      r == Driver::kErrorInvalidValue ? ErrorCode::kResource : ErrorCode::kLaunch));
  }
  /// The driver's copies run on the legacy stream, which does not wait for
  /// the device's own (non-blocking) stream: a copy after an enqueue waits
  /// for the device first.
  Status wait_for_enqueued() {
    if (!enqueued_.exchange(false)) return ok_status();
    return check(driver_.synchronize(), "waiting for enqueued kernels");
  }

  /// The stream this thread's launches go to: the caller's while one is in
  /// use for this device (use_caller_stream), else the device's own.
  typename Driver::Stream stream() const {
    return caller_stream_.device == this ? caller_stream_.stream : stream_;
  }
  static DevicePtr as_device_ptr(std::uintptr_t a) {
    if constexpr (std::is_pointer_v<DevicePtr>) {
      return reinterpret_cast<DevicePtr>(a);
    } else {
      return static_cast<DevicePtr>(a);
    }
  }
  static typename Driver::Stream as_stream(std::uintptr_t s) {
    return reinterpret_cast<typename Driver::Stream>(s);
  }

  /// The function named `compiled.kernel_name` in `module`, with what the
  /// backend reads of it and the dynamic shared bytes its module declares.
  Result<std::pair<typename Driver::Function, LoadedResources>> describe_kernel(
      typename Driver::Module module, const CompiledKernel& compiled) {
    typename Driver::Function fn{};
    if (Code r = driver_.get_function(&fn, module, compiled.kernel_name.c_str()); r != Driver::kSuccess) {
      return error("no kernel '" + compiled.kernel_name + "' in the module", r, ErrorCode::kCompile);
    }
    if (compiled.abi) {
      KF_TRY_ASSIGN(loaded, driver_.kernel_resources(fn, compiled, compiled.abi->dynamic_shared_bytes));
      return std::make_pair(fn, loaded);
    }
    KF_TRY_ASSIGN(declared, module_dynamic_shared_bytes<DevicePtr>(
                                [&](DevicePtr* address, std::size_t* size) {
                                  return driver_.get_global(address, size, module, kDynamicSharedSymbol) ==
                                         Driver::kSuccess;
                                },
                                [&](int* value, DevicePtr address) -> Status {
                                  const Code r = driver_.copy_out(value, address, sizeof(int));
                                  if (r == Driver::kSuccess) return ok_status();
                                  return error(std::string("reading ") + kDynamicSharedSymbol, r);
                                }));
    KF_TRY_ASSIGN(loaded, driver_.kernel_resources(fn, compiled, declared));
    return std::make_pair(fn, loaded);
  }

  Status ensure_events() {
    if (!start_) KF_TRY(check(driver_.create_event(&start_), Driver::kCalls.event_create));
    if (!end_) KF_TRY(check(driver_.create_event(&end_), Driver::kCalls.event_create));
    return ok_status();
  }

  /// `enqueue()` on the stream between the two events, waited for; the
  /// device time between them in ms. A failure while waiting is `failed`.
  template <class Enqueue>
  Result<double> timed(const std::string& failed, Enqueue enqueue) {
    KF_TRY(ensure_events());
    KF_TRY(check(driver_.record_event(start_, stream()), Driver::kCalls.event_record));
    KF_TRY(enqueue());
    KF_TRY(check(driver_.record_event(end_, stream()), Driver::kCalls.event_record));
    KF_TRY(check(driver_.synchronize_event(end_), failed));
    float ms = 0;
    KF_TRY(check(driver_.elapsed_ms(&ms, start_, end_), Driver::kCalls.elapsed));
    return static_cast<double>(ms);
  }

  Driver driver_;
  typename Driver::Stream stream_;
  DeviceInfo info_;
  std::unique_ptr<Compiler> compiler_;
  typename Driver::Event start_{};
  typename Driver::Event end_{};
  std::unique_ptr<Buffer> flush_buffer_;
  unsigned flush_pattern_ = 0;
  StickyError sticky_;
  std::atomic<bool> enqueued_{false};  ///< work enqueued and not yet waited for
  std::unique_ptr<ClockReader> clocks_;
  bool clocks_tried_ = false;
  int ordinal_;
  /// A caller's stream for one device, per thread, so that two threads'
  /// launches on one device each keep their own.
  struct CallerStreamInUse {
    const GpuDevice* device = nullptr;
    typename Driver::Stream stream{};
  };
  static inline thread_local CallerStreamInUse caller_stream_{};
};

/// `device` as `Driver`'s GpuDevice; kBadInput naming it otherwise.
template <class Driver>
Result<GpuDevice<Driver>*> gpu_device_of(Device& device) {
  auto* gpu = dynamic_cast<GpuDevice<Driver>*>(&device);
  if (!gpu) return Error::bad_input(device.info().name + " is not a " + Driver::kBackend + " device");
  return gpu;
}

/// A buffer's device address for a library call; kBadInput for another backend's buffer.
template <class Driver>
Result<typename Driver::DevicePtr> gpu_buffer_address(const Buffer& buffer) {
  const auto* b = dynamic_cast<const GpuBuffer<Driver>*>(&buffer);
  if (!b) {
    return Error::bad_input(std::string("a buffer that is not a ") + Driver::kBackend +
                            " device's passed to a " + Driver::kBackend + " library call");
  }
  return b->ptr();
}

/// kNotFound "no device 'cuda:3': 1 CUDA device(s) present" past the count.
Status check_device_index(const std::string& backend, const std::string& name, std::size_t index, int count);

}  // namespace kforge
