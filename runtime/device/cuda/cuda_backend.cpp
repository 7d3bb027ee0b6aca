// CUDA devices through the driver API: fingerprint, buffers, module load,
// launches timed with events, L2 flush, sticky errors.
#include "runtime/device/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "runtime/device/cuda/cuda_api.hpp"
#include "runtime/device/gpu/gpu_device.hpp"
#include "runtime/device/host/host_cpus.hpp"
#include "runtime/profiling/nvml_api.hpp"

namespace kforge {

namespace {

using cuda::CUresult;
using cuda::DriverApi;

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

/// The kernel driver's version ("580.159.03") from /proc, empty when absent.
std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  const auto k = line.find("Kernel Module");
  if (k == std::string::npos) return {};
  std::string rest = trim(line.substr(k + 13));
  return rest.substr(0, rest.find(' '));
}

std::string uuid_text(const cuda::CUuuid& u) {
  char buf[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return buf;
}

DriverFailure cuda_failure(CUresult r) {
  if (cuda::is_sticky(r)) return DriverFailure::kSticky;
  if (r == cuda::kErrorLaunchOutOfResources || r == cuda::kErrorOutOfMemory)
    return DriverFailure::kOutOfResources;
  return DriverFailure::kOther;
}

Error cuda_error(const DriverApi& api, const std::string& what, CUresult r,
                 ErrorCode code = ErrorCode::kLaunch) {
  return driver_error(what, cuda::error_text(api, r), cuda_failure(r), code);
}

int attribute(const DriverApi& api, cuda::CUdevice dev, int attr) {
  int v = 0;
  return api.cuDeviceGetAttribute(&v, attr, dev) == cuda::kSuccess ? v : 0;
}

DeviceInfo describe(const DriverApi& api, std::size_t index) {
  DeviceInfo d;
  cuda::CUdevice dev = 0;
  api.cuDeviceGet(&dev, static_cast<int>(index));
  char name[256] = {};
  api.cuDeviceGetName(name, sizeof name - 1, dev);
  std::size_t mem = 0;
  api.cuDeviceTotalMem(&mem, dev);
  cuda::CUuuid uuid{};
  api.cuDeviceGetUuid(&uuid, dev);
  int drv = 0;
  api.cuDriverGetVersion(&drv);
  const int major = attribute(api, dev, cuda::kComputeCapabilityMajor);
  const int minor = attribute(api, dev, cuda::kComputeCapabilityMinor);
  const std::string cuda_version = std::to_string(drv / 1000) + "." + std::to_string((drv % 1000) / 10);
  d.selector = "cuda:" + std::to_string(index);
  d.backend = "cuda";
  d.vendor = "NVIDIA";
  d.name = name;
  d.arch = "sm_" + std::to_string(major) + std::to_string(minor);
  d.device_type = DeviceType::kGpu;
  d.compute_units = attribute(api, dev, cuda::kMultiprocessorCount);
  d.clock_mhz = attribute(api, dev, cuda::kClockRate) / 1000;
  d.global_mem_bytes = static_cast<std::int64_t>(mem);
  d.max_alloc_bytes = d.global_mem_bytes;  // no per-allocation limit below the memory
  d.local_mem_bytes = attribute(api, dev, cuda::kMaxSharedMemoryPerBlock);
  d.max_shared_bytes = attribute(api, dev, cuda::kMaxSharedMemoryPerBlockOptin);
  d.cache_bytes = attribute(api, dev, cuda::kL2CacheSize);
  d.cache_line_bytes = 128;
  d.max_block_threads = attribute(api, dev, cuda::kMaxThreadsPerBlock);
  d.simd_width = attribute(api, dev, cuda::kWarpSize);
  d.fp64 = true;  // every CUDA GPU has double precision
  const std::string kmd = kernel_driver_version();
  d.driver_version = (kmd.empty() ? std::string() : kmd + " ") + "(CUDA " + cuda_version + ")";
  d.runtime_version = "CUDA driver API " + cuda_version + "; uuid " + uuid_text(uuid) + "; cc " +
                      std::to_string(major) + "." + std::to_string(minor) + "; memory clock " +
                      std::to_string(attribute(api, dev, cuda::kMemoryClockRate) / 1000) + " MHz, bus " +
                      std::to_string(attribute(api, dev, cuda::kGlobalMemoryBusWidth)) +
                      " bit; shared opt-in " +
                      std::to_string(attribute(api, dev, cuda::kMaxSharedMemoryPerBlockOptin)) +
                      " B; pci bus " + std::to_string(attribute(api, dev, cuda::kPciBusId));
  d.compiler = "nvrtc";
  auto v = nvrtc_version();
  d.compiler_version = v.ok() ? *v : "unavailable";
  d.host_cpu = host_cpu_model();
  return d;
}

/// The CUDA driver as GpuDevice's traits: the table and the device's context.
struct CudaDriver {
  using Code = CUresult;
  using DevicePtr = cuda::CUdeviceptr;
  using Module = cuda::CUmodule;
  using Function = cuda::CUfunction;
  using Stream = cuda::CUstream;
  using Event = cuda::CUevent;
  static constexpr Code kSuccess = cuda::kSuccess;
  static constexpr Code kErrorInvalidValue = cuda::kErrorInvalidValue;
  static constexpr const char* kBackend = "CUDA";
  static constexpr bool kClusters = true;
  static constexpr DriverCallNames kCalls{"cuCtxSetCurrent",
                                          "cuModuleLoadData",
                                          "cuMemAlloc",
                                          "cuMemcpyHtoD",
                                          "cuMemcpyDtoH",
                                          "cuMemsetD32",
                                          "cuLaunchKernel",
                                          "cuEventCreate",
                                          "cuEventRecord",
                                          "cuEventElapsedTime",
                                          "CUDA_ERROR_INVALID_VALUE at launch"};

  const DriverApi* api;
  cuda::CUdevice dev;
  cuda::CUcontext ctx;

  std::string error_text(Code r) const { return cuda::error_text(*api, r); }
  DriverFailure failure_of(Code r) const { return cuda_failure(r); }
  Code make_current() const { return api->cuCtxSetCurrent(ctx); }
  Code allocate(DevicePtr* p, std::size_t bytes) const { return api->cuMemAlloc(p, bytes); }
  Code free(DevicePtr p) const { return api->cuMemFree(p); }
  Code copy_in(DevicePtr dst, const void* src, std::size_t n) const { return api->cuMemcpyHtoD(dst, src, n); }
  Code copy_out(void* dst, DevicePtr src, std::size_t n) const { return api->cuMemcpyDtoH(dst, src, n); }
  Code memset32(DevicePtr dst, unsigned v, std::size_t n) const { return api->cuMemsetD32(dst, v, n); }
  Code synchronize() const { return api->cuCtxSynchronize(); }
  Code load_module(Module* m, const void* image) const { return api->cuModuleLoadData(m, image); }
  Code unload_module(Module m) const { return api->cuModuleUnload(m); }
  Code get_function(Function* f, Module m, const char* name) const {
    return api->cuModuleGetFunction(f, m, name);
  }
  Code get_global(DevicePtr* p, std::size_t* n, Module m, const char* name) const {
    return api->cuModuleGetGlobal(p, n, m, name);
  }
  Code launch(Function f, const LaunchGeometry& g, unsigned shared, Stream s, void** params) const {
    return api->cuLaunchKernel(f, static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                               static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                               static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]), shared,
                               s, params, nullptr);
  }
  /// The grid's x multiplied by `cluster_x`, in clusters of that many CTAs
  /// along x (Triton's num_ctas); invalid value on a driver without clusters.
  Code launch_cluster(Function f, const LaunchGeometry& g, unsigned shared, Stream s, void** params,
                      int cluster_x) const {
    if (!api->cuLaunchKernelEx) return cuda::kErrorInvalidValue;
    cuda::LaunchAttribute cluster;
    cluster.id = cuda::kLaunchAttributeClusterDimension;
    cluster.value.cluster_dim = {static_cast<unsigned>(cluster_x), 1, 1};
    cuda::LaunchConfig config;
    config.grid_x = static_cast<unsigned>(g.grid[0] * cluster_x);
    config.grid_y = static_cast<unsigned>(g.grid[1]);
    config.grid_z = static_cast<unsigned>(g.grid[2]);
    config.block_x = static_cast<unsigned>(g.block[0]);
    config.block_y = static_cast<unsigned>(g.block[1]);
    config.block_z = static_cast<unsigned>(g.block[2]);
    config.shared_bytes = shared;
    config.stream = s;
    config.attributes = &cluster;
    config.attribute_count = 1;
    return api->cuLaunchKernelEx(&config, f, params, nullptr);
  }
  Code create_event(Event* e) const { return api->cuEventCreate(e, 0); }
  Code destroy_event(Event e) const { return api->cuEventDestroy(e); }
  Code record_event(Event e, Stream s) const { return api->cuEventRecord(e, s); }
  Code synchronize_event(Event e) const { return api->cuEventSynchronize(e); }
  Code elapsed_ms(float* ms, Event a, Event b) const { return api->cuEventElapsedTime(ms, a, b); }
  Code destroy_stream(Stream s) const { return api->cuStreamDestroy(s); }
  void release() const { api->cuDevicePrimaryCtxRelease(dev); }

  /// The driver's report of the loaded function, and its dynamic shared
  /// memory allowed: above 48 KB a kernel must opt in (harmless below).
  Result<LoadedResources> kernel_resources(Function fn, const CompiledKernel& compiled, int declared) const {
    LoadedResources out{compiled.resources, declared};
    ResourceReport& res = out.resources;
    int v = 0;
    if (api->cuFuncGetAttribute(&v, cuda::kFuncNumRegs, fn) == kSuccess) res.registers = v;
    if (api->cuFuncGetAttribute(&v, cuda::kFuncMaxThreadsPerBlock, fn) == kSuccess) res.max_block_threads = v;
    if (api->cuFuncGetAttribute(&v, cuda::kFuncLocalSizeBytes, fn) == kSuccess) res.private_mem_bytes = v;
    int static_shared = 0;
    api->cuFuncGetAttribute(&static_shared, cuda::kFuncSharedSizeBytes, fn);
    if (out.dynamic_shared == 0 && compiled.resources.local_mem_bytes > static_shared) {
      // Not readable through the driver: what NVRTC recorded at compile time.
      out.dynamic_shared = static_cast<int>(compiled.resources.local_mem_bytes - static_shared);
    }
    if (out.dynamic_shared > 0) {
      if (Code r = api->cuFuncSetAttribute(fn, cuda::kFuncMaxDynamicSharedSizeBytes, out.dynamic_shared);
          r != kSuccess) {
        return Error{ErrorCode::kResource,
                     compiled.kernel_name + " needs " + std::to_string(out.dynamic_shared) +
                         " bytes of dynamic shared memory: " + error_text(r),
                     {}};
      }
    }
    res.local_mem_bytes = static_shared + out.dynamic_shared;
    return out;
  }

  /// NVML's view of this GPU, found by its UUID (nvml_api.hpp); none without NVML.
  std::unique_ptr<ClockReader> open_clock_reader(const DeviceInfo&) const {
    cuda::CUuuid uuid{};
    if (api->cuDeviceGetUuid(&uuid, dev) != kSuccess) return nullptr;
    auto r = nvml::open_nvml_clock_reader(uuid_text(uuid));
    return r.ok() ? std::move(r).value() : nullptr;
  }
};

using CudaDevice = GpuDevice<CudaDriver>;

}  // namespace

Status cuda_make_current(Device& device) {
  KF_TRY_ASSIGN(cuda, gpu_device_of<CudaDriver>(device));
  return cuda->make_current();
}

Result<std::uint64_t> cuda_buffer_address(const Buffer& buffer) {
  KF_TRY_ASSIGN(address, gpu_buffer_address<CudaDriver>(buffer));
  return static_cast<std::uint64_t>(address);
}

Result<double> cuda_timed_call(Device& device, const std::function<Status(void*)>& enqueue) {
  KF_TRY_ASSIGN(cuda, gpu_device_of<CudaDriver>(device));
  return cuda->timed_call(enqueue);
}

Status cuda_enqueued_call(Device& device, const std::function<Status(void*)>& enqueue) {
  KF_TRY_ASSIGN(cuda, gpu_device_of<CudaDriver>(device));
  return cuda->enqueued_call(enqueue);
}

std::string cuda_unavailable_reason() {
  const auto& api = DriverApi::get();
  return api.ok() ? std::string() : api.error().message;
}

std::vector<DeviceInfo> list_cuda_devices() {
  const auto& api = DriverApi::get();
  if (!api.ok()) return {};
  int n = 0;
  if ((*api)->cuDeviceGetCount(&n) != cuda::kSuccess || n <= 0) return {};
  std::vector<DeviceInfo> out;
  for (int i = 0; i < n; ++i) out.push_back(describe(**api, static_cast<std::size_t>(i)));
  return out;
}

Result<std::unique_ptr<Device>> open_cuda_device(std::size_t index) {
  const auto& loaded = DriverApi::get();
  if (!loaded.ok()) return loaded.error();
  return open_cuda_device(**loaded, index);
}

Result<std::unique_ptr<Device>> open_cuda_device(const DriverApi& api, std::size_t index) {
  int n = 0;
  api.cuDeviceGetCount(&n);
  KF_TRY(check_device_index("cuda", "CUDA", index, n));
  cuda::CUdevice dev = 0;
  if (CUresult r = api.cuDeviceGet(&dev, static_cast<int>(index)); r != cuda::kSuccess) {
    return cuda_error(api, "cuDeviceGet", r);
  }
  cuda::CUcontext ctx = nullptr;
  if (CUresult r = api.cuDevicePrimaryCtxRetain(&ctx, dev); r != cuda::kSuccess) {
    return cuda_error(api, "cuDevicePrimaryCtxRetain", r);
  }
  cuda::CUstream stream = nullptr;
  if (CUresult r = api.cuCtxSetCurrent(ctx); r != cuda::kSuccess) {
    api.cuDevicePrimaryCtxRelease(dev);
    return cuda_error(api, "cuCtxSetCurrent", r);
  }
  if (CUresult r = api.cuStreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */); r != cuda::kSuccess) {
    api.cuDevicePrimaryCtxRelease(dev);
    return cuda_error(api, "cuStreamCreate", r);
  }
  DeviceInfo info = describe(api, index);
  auto compiler = make_nvrtc_compiler(info.arch);
  return std::unique_ptr<Device>(std::make_unique<CudaDevice>(
      CudaDriver{&api, dev, ctx}, stream, std::move(info), std::move(compiler), static_cast<int>(index)));
}

}  // namespace kforge
