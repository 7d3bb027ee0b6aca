// HIP devices through the HIP runtime: fingerprint, buffers, module load,
// launches timed with events, L2 flush, sticky errors.
#include "hip_backend.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "gpu_launch.hpp"
#include "hip_api.hpp"
#include "launch_check.hpp"
#include "library_kernel.hpp"
#ifdef KFORGE_HAVE_ROCM_SMI
#include "rocm_smi_api.hpp"
#endif
#include "sticky_error.hpp"

namespace kforge {

namespace {

using hip::hipError_t;
using hip::RuntimeApi;

std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      std::string v = line.substr(line.find(':') + 1);
      return v.substr(v.find_first_not_of(' '));
    }
  }
  return "unknown";
}

DriverFailure failure_of(hipError_t r) {
  if (hip::is_sticky(r)) return DriverFailure::kSticky;
  if (r == hip::kErrorLaunchOutOfResources || r == hip::kErrorOutOfMemory)
    return DriverFailure::kOutOfResources;
  return DriverFailure::kOther;
}

Error hip_error(const RuntimeApi& api, const std::string& what, hipError_t r, ErrorCode code = ErrorCode::kLaunch) {
  return driver_error(what, hip::error_text(api, r), failure_of(r), code);
}

int attribute(const RuntimeApi& api, int dev, int attr) {
  int v = 0;
  return api.hipDeviceGetAttribute(&v, attr, dev) == hip::kSuccess ? v : 0;
}

/// The gfx target of device `dev`. hipDeviceProp_t's layout changed between
/// ROCm releases, so its gcnArchName ("gfx90a:sramecc+:xnack-") is found by
/// scanning the returned bytes for a "gfx" name rather than by offset.
std::string gfx_arch(const RuntimeApi& api, int dev) {
  std::vector<char> props(16384, '\0');
  if (api.hipGetDeviceProperties(props.data(), dev) != hip::kSuccess) return "unknown";
  for (std::size_t i = 0; i + 4 < props.size(); ++i) {
    if (std::memcmp(props.data() + i, "gfx", 3) == 0 && (i == 0 || props[i - 1] == '\0')) {
      std::string s(props.data() + i);
      return s.substr(0, s.find(':'));
    }
  }
  return "unknown";
}

DeviceInfo describe(const RuntimeApi& api, std::size_t index) {
  const int dev = static_cast<int>(index);
  DeviceInfo d;
  char name[256] = {};
  api.hipDeviceGetName(name, sizeof name - 1, dev);
  std::size_t mem = 0;
  api.hipDeviceTotalMem(&mem, dev);
  int drv = 0;
  api.hipDriverGetVersion(&drv);
  d.selector = "hip:" + std::to_string(index);
  d.backend = "hip";
  d.vendor = "AMD";
  d.name = name;
  d.arch = gfx_arch(api, dev);
  d.device_type = DeviceType::kGpu;
  d.compute_units = attribute(api, dev, hip::kMultiprocessorCount);
  d.clock_mhz = attribute(api, dev, hip::kClockRate) / 1000;
  d.global_mem_bytes = static_cast<std::int64_t>(mem);
  d.max_alloc_bytes = d.global_mem_bytes;  // no per-allocation limit below the memory
  d.local_mem_bytes = attribute(api, dev, hip::kMaxSharedMemoryPerBlock);
  d.max_shared_bytes = d.local_mem_bytes;  // LDS has no opt-in above the per-block limit
  d.cache_bytes = attribute(api, dev, hip::kL2CacheSize);
  d.cache_line_bytes = 128;
  d.max_block_threads = attribute(api, dev, hip::kMaxThreadsPerBlock);
  d.simd_width = attribute(api, dev, hip::kWarpSize);
  d.fp64 = true;  // every ROCm GPU has double precision
  d.driver_version = std::to_string(drv);
  d.runtime_version = "HIP " + api.version() + "; memory clock " +
                      std::to_string(attribute(api, dev, hip::kMemoryClockRate) / 1000) + " MHz, bus " +
                      std::to_string(attribute(api, dev, hip::kMemoryBusWidth)) + " bit; pci bus " +
                      std::to_string(attribute(api, dev, hip::kPciBusId));
  d.compiler = "hiprtc";
  auto v = hiprtc_version();
  d.compiler_version = v.ok() ? *v : "unavailable";
  d.host_cpu = host_cpu();
  return d;
}

class HipBuffer final : public Buffer {
 public:
  HipBuffer(const RuntimeApi& api, void* p, std::size_t size) : api_(api), ptr_(p), size_(size) {}
  ~HipBuffer() override {
    if (ptr_) api_.hipFree(ptr_);
  }
  std::size_t size() const override { return size_; }
  void* ptr() const { return ptr_; }

 private:
  const RuntimeApi& api_;
  void* ptr_;
  std::size_t size_;
};

class HipKernel final : public Kernel {
 public:
  HipKernel(const RuntimeApi& api, hip::hipModule_t m, hip::hipFunction_t f, std::string name, ResourceReport r,
            int dynamic_shared)
      : api_(api), module_(m), fn_(f), name_(std::move(name)), resources_(r), dynamic_shared_(dynamic_shared) {}
  ~HipKernel() override { api_.hipModuleUnload(module_); }
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return resources_; }
  hip::hipFunction_t fn() const { return fn_; }
  int dynamic_shared() const { return dynamic_shared_; }

 private:
  const RuntimeApi& api_;
  hip::hipModule_t module_;
  hip::hipFunction_t fn_;
  std::string name_;
  ResourceReport resources_;
  int dynamic_shared_;
};

class HipDevice final : public Device {
 public:
  HipDevice(const RuntimeApi& api, int dev, hip::hipStream_t stream, DeviceInfo info)
      : api_(api), dev_(dev), stream_(stream), info_(std::move(info)), compiler_(make_hiprtc_compiler(info_.arch)) {}
  ~HipDevice() override {
    flush_buffer_.reset();
    api_.hipSetDevice(dev_);
    if (start_) api_.hipEventDestroy(start_);
    if (end_) api_.hipEventDestroy(end_);
    if (stream_) api_.hipStreamDestroy(stream_);
  }
  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return *compiler_; }

  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override {
    KF_TRY(enter());
    hip::hipModule_t module = nullptr;
    if (hipError_t r = api_.hipModuleLoadData(&module, compiled.binary.data()); r != hip::kSuccess) {
      return note(hip_error(api_, "hipModuleLoadData (" + compiled.kernel_name + ")", r, ErrorCode::kCompile));
    }
    hip::hipFunction_t fn = nullptr;
    if (hipError_t r = api_.hipModuleGetFunction(&fn, module, compiled.kernel_name.c_str()); r != hip::kSuccess) {
      api_.hipModuleUnload(module);
      return note(hip_error(api_, "no kernel '" + compiled.kernel_name + "' in the module", r, ErrorCode::kCompile));
    }
    auto declared = module_dynamic_shared_bytes<void*>(
        [&](void** address, std::size_t* size) {
          return api_.hipModuleGetGlobal(address, size, module, kDynamicSharedSymbol) == hip::kSuccess;
        },
        [&](int* value, void* address) -> Status {
          if (hipError_t r = api_.hipMemcpyDtoH(value, address, sizeof(int)); r != hip::kSuccess) {
            return hip_error(api_, std::string("reading ") + kDynamicSharedSymbol, r);
          }
          return ok_status();
        });
    if (!declared.ok()) {
      api_.hipModuleUnload(module);
      return note(declared.error());
    }
    const int dynamic_shared = *declared;
    ResourceReport res = compiled.resources;
    if (res.local_mem_bytes >= 0) res.local_mem_bytes += dynamic_shared;
    return std::unique_ptr<Kernel>(
        std::make_unique<HipKernel>(api_, module, fn, compiled.kernel_name, res, dynamic_shared));
  }

  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    KF_TRY(enter());
    void* p = nullptr;
    if (hipError_t r = api_.hipMalloc(&p, std::max<std::size_t>(bytes, 1)); r != hip::kSuccess) {
      return note(hip_error(api_, "hipMalloc(" + std::to_string(bytes) + " bytes)", r, ErrorCode::kResource));
    }
    return std::unique_ptr<Buffer>(std::make_unique<HipBuffer>(api_, p, bytes));
  }

  Status write(Buffer& dst, const void* src, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kWrite, bytes, dst.size()));
    KF_TRY(enter());
    if (hipError_t r = api_.hipMemcpyHtoD(static_cast<HipBuffer&>(dst).ptr(), const_cast<void*>(src), bytes);
        r != hip::kSuccess)
      return note(hip_error(api_, "hipMemcpyHtoD", r));
    return ok_status();
  }

  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kRead, bytes, src.size()));
    KF_TRY(enter());
    if (hipError_t r = api_.hipMemcpyDtoH(dst, static_cast<const HipBuffer&>(src).ptr(), bytes); r != hip::kSuccess)
      return note(hip_error(api_, "hipMemcpyDtoH", r));
    return ok_status();
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->run(args, g, on_running);
    if (on_running) on_running();  // the code exists once loaded
    auto& k = static_cast<HipKernel&>(kernel);
    KF_TRY(check_launch_geometry(k, g));
    KF_TRY(enter());
    auto params = PackedArgs<void*>::of<HipBuffer>(args);
    if (!start_ && api_.hipEventCreate(&start_) != hip::kSuccess) return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (!end_ && api_.hipEventCreate(&end_) != hip::kSuccess) return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (hipError_t r = api_.hipEventRecord(start_, stream_); r != hip::kSuccess) return note(hip_error(api_, "hipEventRecord", r));
    hipError_t r = api_.hipModuleLaunchKernel(
        k.fn(), static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
        static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
        static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]),
        static_cast<unsigned>(k.dynamic_shared()), stream_, params.params(), nullptr);
    if (r != hip::kSuccess) {
      return note(hip_error(api_, "hipModuleLaunchKernel(" + k.name() + ")", r,
                            r == hip::kErrorInvalidValue ? ErrorCode::kResource : ErrorCode::kLaunch));
    }
    if (hipError_t e = api_.hipEventRecord(end_, stream_); e != hip::kSuccess) return note(hip_error(api_, "hipEventRecord", e));
    if (hipError_t e = api_.hipEventSynchronize(end_); e != hip::kSuccess) {
      return note(hip_error(api_, k.name() + " failed while running", e));
    }
    float ms = 0;
    if (hipError_t e = api_.hipEventElapsedTime(&ms, start_, end_); e != hip::kSuccess) {
      return note(hip_error(api_, "hipEventElapsedTime", e));
    }
    return static_cast<double>(ms);
  }

  Status flush_cache() override {
    KF_TRY(enter());
    if (!flush_buffer_) {
      // The L2 and, on CDNA 3, the Infinity Cache the L2 size leaves out.
      KF_TRY_ASSIGN(buf, allocate(cache_flush().bytes));
      flush_buffer_ = std::move(buf);
    }
    ++flush_pattern_;
    auto& b = static_cast<HipBuffer&>(*flush_buffer_);
    if (hipError_t r = api_.hipMemsetD32(b.ptr(), flush_pattern_, b.size() / 4); r != hip::kSuccess)
      return note(hip_error(api_, "cache flush (hipMemsetD32)", r));
    if (hipError_t r = api_.hipDeviceSynchronize(); r != hip::kSuccess) return note(hip_error(api_, "cache flush", r));
    return ok_status();
  }

  /// ROCm SMI's view of this GPU, found by its PCI domain, bus and device
  /// (rocm_smi_api.hpp); none without ROCm SMI (at build or at run time) or
  /// when HIP gives no address.
  ClockReader* clock_reader() override {
#ifdef KFORGE_HAVE_ROCM_SMI
    if (!clocks_tried_) {
      clocks_tried_ = true;
      int bus = 0, device = 0, domain = 0;
      if (api_.hipDeviceGetAttribute(&bus, hip::kPciBusId, dev_) == hip::kSuccess &&
          api_.hipDeviceGetAttribute(&device, hip::kPciDeviceId, dev_) == hip::kSuccess &&
          api_.hipDeviceGetAttribute(&domain, hip::kPciDomainId, dev_) == hip::kSuccess) {
        const rocm_smi::PciAddress pci{static_cast<std::uint32_t>(domain), static_cast<std::uint32_t>(bus),
                                       static_cast<std::uint32_t>(device)};
        if (auto r = rocm_smi::open_rocm_smi_clock_reader(pci, info_.arch); r.ok()) clocks_ = std::move(r).value();
      }
    }
#endif
    return clocks_.get();
  }

  Status make_current() {
    return enter();
  }
  /// A library's work on this device's stream, timed as a launch is.
  Result<double> timed_call(const std::function<Status(void*)>& enqueue) {
    KF_TRY(enter());
    if (!start_ && api_.hipEventCreate(&start_) != hip::kSuccess)
      return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (!end_ && api_.hipEventCreate(&end_) != hip::kSuccess)
      return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (hipError_t r = api_.hipEventRecord(start_, stream_); r != hip::kSuccess)
      return note(hip_error(api_, "hipEventRecord", r));
    KF_TRY(enqueue(stream_));
    if (hipError_t e = api_.hipEventRecord(end_, stream_); e != hip::kSuccess)
      return note(hip_error(api_, "hipEventRecord", e));
    if (hipError_t e = api_.hipEventSynchronize(end_); e != hip::kSuccess) {
      return note(hip_error(api_, "a library call failed while running", e));
    }
    float ms = 0;
    if (hipError_t e = api_.hipEventElapsedTime(&ms, start_, end_); e != hip::kSuccess) {
      return note(hip_error(api_, "hipEventElapsedTime", e));
    }
    return static_cast<double>(ms);
  }

 private:
  Status enter() {
    KF_TRY(sticky_.check());
    if (hipError_t r = api_.hipSetDevice(dev_); r != hip::kSuccess) return note(hip_error(api_, "hipSetDevice", r));
    return ok_status();
  }
  Error note(Error e) {
    return sticky_.note(std::move(e));
  }

  const RuntimeApi& api_;
  int dev_;
  hip::hipStream_t stream_;
  DeviceInfo info_;
  std::unique_ptr<Compiler> compiler_;
  hip::hipEvent_t start_ = nullptr;
  hip::hipEvent_t end_ = nullptr;
  std::unique_ptr<Buffer> flush_buffer_;
  int flush_pattern_ = 0;
  StickyError sticky_;
  std::unique_ptr<ClockReader> clocks_;
  bool clocks_tried_ = false;
};

}  // namespace

std::vector<DeviceInfo> list_hip_devices() {
  const auto& api = RuntimeApi::get();
  if (!api.ok()) return {};
  int n = 0;
  if ((*api)->hipGetDeviceCount(&n) != hip::kSuccess || n <= 0) return {};
  std::vector<DeviceInfo> out;
  for (int i = 0; i < n; ++i) out.push_back(describe(**api, static_cast<std::size_t>(i)));
  return out;
}

Status hip_make_current(Device& device) {
  auto* hip = dynamic_cast<HipDevice*>(&device);
  if (!hip) return Error::bad_input(device.info().name + " is not a HIP device");
  return hip->make_current();
}

Result<void*> hip_buffer_address(const Buffer& buffer) {
  const auto* b = dynamic_cast<const HipBuffer*>(&buffer);
  if (!b) return Error::bad_input("a buffer that is not a HIP device's passed to a HIP library call");
  return b->ptr();
}

Result<double> hip_timed_call(Device& device, const std::function<Status(void*)>& enqueue) {
  auto* hip = dynamic_cast<HipDevice*>(&device);
  if (!hip) return Error::bad_input(device.info().name + " is not a HIP device");
  return hip->timed_call(enqueue);
}

Result<std::unique_ptr<Device>> open_hip_device(std::size_t index) {
  const auto& loaded = RuntimeApi::get();
  if (!loaded.ok()) return loaded.error();
  return open_hip_device(**loaded, index);
}

Result<std::unique_ptr<Device>> open_hip_device(const RuntimeApi& api, std::size_t index) {
  int n = 0;
  api.hipGetDeviceCount(&n);
  if (index >= static_cast<std::size_t>(std::max(n, 0))) {
    return Error::not_found("no device 'hip:" + std::to_string(index) + "': " + std::to_string(std::max(n, 0)) +
                            " HIP device(s) present");
  }
  if (hipError_t r = api.hipSetDevice(static_cast<int>(index)); r != hip::kSuccess) return hip_error(api, "hipSetDevice", r);
  hip::hipStream_t stream = nullptr;
  if (hipError_t r = api.hipStreamCreate(&stream); r != hip::kSuccess) return hip_error(api, "hipStreamCreate", r);
  return std::unique_ptr<Device>(std::make_unique<HipDevice>(api, static_cast<int>(index), stream, describe(api, index)));
}

}  // namespace kforge
