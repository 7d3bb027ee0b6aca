// HIP devices through the HIP runtime: fingerprint, buffers, module load,
// launches timed with events, L2 flush, sticky errors.
#include "runtime/device/hip/hip_backend.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include "runtime/device/gpu/gpu_device.hpp"
#include "runtime/device/hip/hip_api.hpp"
#include "runtime/device/host/host_cpus.hpp"
#ifdef KFORGE_HAVE_ROCM_SMI
#include "runtime/profiling/rocm_smi_api.hpp"
#endif

namespace kforge {

namespace {

using hip::hipError_t;
using hip::RuntimeApi;

DriverFailure hip_failure(hipError_t r) {
  if (hip::is_sticky(r)) return DriverFailure::kSticky;
  if (r == hip::kErrorLaunchOutOfResources || r == hip::kErrorOutOfMemory)
    return DriverFailure::kOutOfResources;
  return DriverFailure::kOther;
}

Error hip_error(const RuntimeApi& api, const std::string& what, hipError_t r,
                ErrorCode code = ErrorCode::kLaunch) {
  return driver_error(what, hip::error_text(api, r), hip_failure(r), code);
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
  d.host_cpu = host_cpu_model();
  return d;
}

/// The HIP runtime as GpuDevice's traits: the table and the device's index.
struct HipDriver {
  using Code = hipError_t;
  using DevicePtr = void*;
  using Module = hip::hipModule_t;
  using Function = hip::hipFunction_t;
  using Stream = hip::hipStream_t;
  using Event = hip::hipEvent_t;
  static constexpr Code kSuccess = hip::kSuccess;
  static constexpr Code kErrorInvalidValue = hip::kErrorInvalidValue;
  static constexpr const char* kBackend = "HIP";
  static constexpr bool kClusters = false;
  static constexpr DriverCallNames kCalls{"hipSetDevice",
                                          "hipModuleLoadData",
                                          "hipMalloc",
                                          "hipMemcpyHtoD",
                                          "hipMemcpyDtoH",
                                          "hipMemsetD32",
                                          "hipModuleLaunchKernel",
                                          "hipEventCreate",
                                          "hipEventRecord",
                                          "hipEventElapsedTime",
                                          "hipErrorInvalidValue at launch"};

  const RuntimeApi* api;
  int dev;

  std::string error_text(Code r) const { return hip::error_text(*api, r); }
  DriverFailure failure_of(Code r) const { return hip_failure(r); }
  Code make_current() const { return api->hipSetDevice(dev); }
  Code allocate(DevicePtr* p, std::size_t bytes) const { return api->hipMalloc(p, bytes); }
  Code free(DevicePtr p) const { return api->hipFree(p); }
  Code copy_in(DevicePtr dst, const void* src, std::size_t n) const {
    return api->hipMemcpyHtoD(dst, const_cast<void*>(src), n);  // HIP declares the source non-const
  }
  Code copy_out(void* dst, DevicePtr src, std::size_t n) const { return api->hipMemcpyDtoH(dst, src, n); }
  Code memset32(DevicePtr dst, unsigned v, std::size_t n) const {
    return api->hipMemsetD32(dst, static_cast<int>(v), n);
  }
  Code synchronize() const { return api->hipDeviceSynchronize(); }
  Code load_module(Module* m, const void* image) const { return api->hipModuleLoadData(m, image); }
  Code unload_module(Module m) const { return api->hipModuleUnload(m); }
  Code get_function(Function* f, Module m, const char* name) const {
    return api->hipModuleGetFunction(f, m, name);
  }
  Code get_global(DevicePtr* p, std::size_t* n, Module m, const char* name) const {
    return api->hipModuleGetGlobal(p, n, m, name);
  }
  Code launch(Function f, const LaunchGeometry& g, unsigned shared, Stream s, void** params) const {
    return api->hipModuleLaunchKernel(f, static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                                      static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                                      static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]),
                                      shared, s, params, nullptr);
  }
  Code create_event(Event* e) const { return api->hipEventCreate(e); }
  Code destroy_event(Event e) const { return api->hipEventDestroy(e); }
  Code record_event(Event e, Stream s) const { return api->hipEventRecord(e, s); }
  Code synchronize_event(Event e) const { return api->hipEventSynchronize(e); }
  Code elapsed_ms(float* ms, Event a, Event b) const { return api->hipEventElapsedTime(ms, a, b); }
  Code destroy_stream(Stream s) const { return api->hipStreamDestroy(s); }
  void release() const {}

  /// hipRTC's report with the module's dynamic shared memory added: LDS has
  /// no opt-in to ask for.
  Result<LoadedResources> kernel_resources(Function, const CompiledKernel& compiled, int declared) const {
    LoadedResources out{compiled.resources, declared};
    if (out.resources.local_mem_bytes >= 0) out.resources.local_mem_bytes += declared;
    return out;
  }

  /// ROCm SMI's view of this GPU, found by its PCI domain, bus and device
  /// (rocm_smi_api.hpp); none without ROCm SMI (at build or at run time) or
  /// when HIP gives no address.
  std::unique_ptr<ClockReader> open_clock_reader([[maybe_unused]] const DeviceInfo& info) const {
#ifdef KFORGE_HAVE_ROCM_SMI
    int bus = 0, device = 0, domain = 0;
    if (api->hipDeviceGetAttribute(&bus, hip::kPciBusId, dev) != kSuccess ||
        api->hipDeviceGetAttribute(&device, hip::kPciDeviceId, dev) != kSuccess ||
        api->hipDeviceGetAttribute(&domain, hip::kPciDomainId, dev) != kSuccess) {
      return nullptr;
    }
    const rocm_smi::PciAddress pci{static_cast<std::uint32_t>(domain), static_cast<std::uint32_t>(bus),
                                   static_cast<std::uint32_t>(device)};
    auto r = rocm_smi::open_rocm_smi_clock_reader(pci, info.arch);
    if (r.ok()) return std::move(r).value();
#endif
    return nullptr;
  }
};

using HipDevice = GpuDevice<HipDriver>;

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
  KF_TRY_ASSIGN(hip, gpu_device_of<HipDriver>(device));
  return hip->make_current();
}

Result<void*> hip_buffer_address(const Buffer& buffer) {
  return gpu_buffer_address<HipDriver>(buffer);
}

Result<double> hip_timed_call(Device& device, const std::function<Status(void*)>& enqueue) {
  KF_TRY_ASSIGN(hip, gpu_device_of<HipDriver>(device));
  return hip->timed_call(enqueue);
}

Status hip_enqueued_call(Device& device, const std::function<Status(void*)>& enqueue) {
  KF_TRY_ASSIGN(hip, gpu_device_of<HipDriver>(device));
  return hip->enqueued_call(enqueue);
}

Result<std::unique_ptr<Device>> open_hip_device(std::size_t index) {
  const auto& loaded = RuntimeApi::get();
  if (!loaded.ok()) return loaded.error();
  return open_hip_device(**loaded, index);
}

Result<std::unique_ptr<Device>> open_hip_device(const RuntimeApi& api, std::size_t index) {
  int n = 0;
  api.hipGetDeviceCount(&n);
  KF_TRY(check_device_index("hip", "HIP", index, n));
  const int dev = static_cast<int>(index);
  if (hipError_t r = api.hipSetDevice(dev); r != hip::kSuccess) return hip_error(api, "hipSetDevice", r);
  hip::hipStream_t stream = nullptr;
  if (hipError_t r = api.hipStreamCreate(&stream); r != hip::kSuccess)
    return hip_error(api, "hipStreamCreate", r);
  DeviceInfo info = describe(api, index);
  auto compiler = make_hiprtc_compiler(info.arch);
  return std::unique_ptr<Device>(std::make_unique<HipDevice>(HipDriver{&api, dev}, stream, std::move(info),
                                                             std::move(compiler), static_cast<int>(index)));
}

}  // namespace kforge
