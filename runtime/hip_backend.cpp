// HIP devices through the HIP runtime: fingerprint, buffers, module load,
// launches timed with events, L2 flush, sticky errors.
#include "hip_backend.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>

#include "hip_api.hpp"
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

Error hip_error(const RuntimeApi& api, const std::string& what, hipError_t r, ErrorCode code = ErrorCode::kLaunch) {
  const std::string text = what + ": " + hip::error_text(api, r);
  if (hip::is_sticky(r)) return sticky_device_error(text, hip::error_text(api, r));
  if (r == hip::kErrorLaunchOutOfResources || r == hip::kErrorOutOfMemory) code = ErrorCode::kResource;
  return Error{code, text, {}};
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
  d.device_type = "gpu";
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
    int dynamic_shared = 0;
    void* gptr = nullptr;
    std::size_t gsize = 0;
    if (api_.hipModuleGetGlobal(&gptr, &gsize, module, "kf_dynamic_shared_bytes") == hip::kSuccess &&
        gsize == sizeof(int)) {
      if (hipError_t r = api_.hipMemcpyDtoH(&dynamic_shared, gptr, sizeof(int)); r != hip::kSuccess) {
        api_.hipModuleUnload(module);
        return note(hip_error(api_, "reading kf_dynamic_shared_bytes", r));
      }
    }
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
    if (bytes > dst.size())
      return Error::bad_input("write of " + std::to_string(bytes) + " bytes into a buffer of " + std::to_string(dst.size()));
    KF_TRY(enter());
    if (hipError_t r = api_.hipMemcpyHtoD(static_cast<HipBuffer&>(dst).ptr(), const_cast<void*>(src), bytes);
        r != hip::kSuccess)
      return note(hip_error(api_, "hipMemcpyHtoD", r));
    return ok_status();
  }

  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    if (bytes > src.size())
      return Error::bad_input("read of " + std::to_string(bytes) + " bytes from a buffer of " + std::to_string(src.size()));
    KF_TRY(enter());
    if (hipError_t r = api_.hipMemcpyDtoH(dst, static_cast<const HipBuffer&>(src).ptr(), bytes); r != hip::kSuccess)
      return note(hip_error(api_, "hipMemcpyDtoH", r));
    return ok_status();
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    if (on_running) on_running();  // the code exists once loaded
    for (int i = 0; i < 3; ++i) {
      if (g.block[i] < 1 || g.grid[i] < 1) return Error::bad_input("launch geometry must be positive in every dimension");
    }
    auto& k = static_cast<HipKernel&>(kernel);
    const std::int64_t threads = g.block[0] * g.block[1] * g.block[2];
    if (k.resources().max_block_threads > 0 && threads > k.resources().max_block_threads) {
      return Error{ErrorCode::kResource,
                   k.name() + ": " + std::to_string(threads) + " threads per block exceed the kernel's limit of " +
                       std::to_string(k.resources().max_block_threads),
                   {}};
    }
    KF_TRY(enter());
    std::vector<void*> ptrs(args.size());
    std::vector<void*> params(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      switch (args[i].kind) {
        case KernelArg::Kind::kBuffer:
          ptrs[i] = static_cast<HipBuffer*>(args[i].buffer)->ptr();
          params[i] = &ptrs[i];
          break;
        case KernelArg::Kind::kInt32: params[i] = const_cast<std::int32_t*>(&args[i].i32); break;
        case KernelArg::Kind::kFloat32: params[i] = const_cast<float*>(&args[i].f32); break;
      }
    }
    if (!start_ && api_.hipEventCreate(&start_) != hip::kSuccess) return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (!end_ && api_.hipEventCreate(&end_) != hip::kSuccess) return Error{ErrorCode::kLaunch, "hipEventCreate failed", {}};
    if (hipError_t r = api_.hipEventRecord(start_, stream_); r != hip::kSuccess) return note(hip_error(api_, "hipEventRecord", r));
    hipError_t r = api_.hipModuleLaunchKernel(k.fn(), static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                                              static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                                              static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]),
                                              static_cast<unsigned>(k.dynamic_shared()), stream_, params.data(), nullptr);
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

 private:
  Status enter() {
    if (sticky_) return *sticky_;
    if (hipError_t r = api_.hipSetDevice(dev_); r != hip::kSuccess) return note(hip_error(api_, "hipSetDevice", r));
    return ok_status();
  }
  Error note(Error e) {
    if (is_sticky_device_error(e)) sticky_ = e;
    return e;
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
  std::optional<Error> sticky_;
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

Result<std::unique_ptr<Device>> open_hip_device(std::size_t index) {
  const auto& loaded = RuntimeApi::get();
  if (!loaded.ok()) return loaded.error();
  const RuntimeApi& api = **loaded;
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
