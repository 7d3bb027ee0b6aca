// CUDA devices through the driver API: fingerprint, buffers, module load,
// launches timed with events, L2 flush, sticky errors.
#include "cuda_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cuda_api.hpp"
#include "gpu_launch.hpp"
#include "launch_check.hpp"
#include "library_kernel.hpp"
#include "nvml_api.hpp"
#include "sticky_error.hpp"

namespace kforge {

namespace {

using cuda::CUresult;
using cuda::DriverApi;

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return trim(line.substr(line.find(':') + 1));
  }
  return "unknown";
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
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

DriverFailure failure_of(CUresult r) {
  if (cuda::is_sticky(r)) return DriverFailure::kSticky;
  if (r == cuda::kErrorLaunchOutOfResources || r == cuda::kErrorOutOfMemory)
    return DriverFailure::kOutOfResources;
  return DriverFailure::kOther;
}

Error cuda_error(const DriverApi& api, const std::string& what, CUresult r, ErrorCode code = ErrorCode::kLaunch) {
  return driver_error(what, cuda::error_text(api, r), failure_of(r), code);
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
                      std::to_string(attribute(api, dev, cuda::kGlobalMemoryBusWidth)) + " bit; shared opt-in " +
                      std::to_string(attribute(api, dev, cuda::kMaxSharedMemoryPerBlockOptin)) + " B; pci bus " +
                      std::to_string(attribute(api, dev, cuda::kPciBusId));
  d.compiler = "nvrtc";
  auto v = nvrtc_version();
  d.compiler_version = v.ok() ? *v : "unavailable";
  d.host_cpu = host_cpu();
  return d;
}

class CudaBuffer final : public Buffer {
 public:
  CudaBuffer(const DriverApi& api, cuda::CUdeviceptr p, std::size_t size) : api_(api), ptr_(p), size_(size) {}
  ~CudaBuffer() override {
    if (ptr_) api_.cuMemFree(ptr_);
  }
  std::size_t size() const override { return size_; }
  cuda::CUdeviceptr ptr() const { return ptr_; }

 private:
  const DriverApi& api_;
  cuda::CUdeviceptr ptr_;
  std::size_t size_;
};

class CudaKernel final : public Kernel {
 public:
  CudaKernel(const DriverApi& api, cuda::CUmodule m, cuda::CUfunction f, std::string name, ResourceReport r,
             int dynamic_shared)
      : api_(api), module_(m), fn_(f), name_(std::move(name)), resources_(r), dynamic_shared_(dynamic_shared) {}
  ~CudaKernel() override { api_.cuModuleUnload(module_); }
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return resources_; }
  cuda::CUfunction fn() const { return fn_; }
  int dynamic_shared() const { return dynamic_shared_; }

 private:
  const DriverApi& api_;
  cuda::CUmodule module_;
  cuda::CUfunction fn_;
  std::string name_;
  ResourceReport resources_;
  int dynamic_shared_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(const DriverApi& api, cuda::CUdevice dev, cuda::CUcontext ctx, cuda::CUstream stream, DeviceInfo info)
      : api_(api), dev_(dev), ctx_(ctx), stream_(stream), info_(std::move(info)), compiler_(make_nvrtc_compiler(info_.arch)) {}
  ~CudaDevice() override {
    flush_buffer_.reset();
    api_.cuCtxSetCurrent(ctx_);
    if (start_) api_.cuEventDestroy(start_);
    if (end_) api_.cuEventDestroy(end_);
    if (stream_) api_.cuStreamDestroy(stream_);
    api_.cuDevicePrimaryCtxRelease(dev_);
  }

  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return *compiler_; }

  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& compiled) override {
    KF_TRY(enter());
    cuda::CUmodule module = nullptr;
    if (CUresult r = api_.cuModuleLoadData(&module, compiled.binary.data()); r != cuda::kSuccess) {
      return note(cuda_error(api_, "cuModuleLoadData (" + compiled.kernel_name + ")", r, ErrorCode::kCompile));
    }
    cuda::CUfunction fn = nullptr;
    if (CUresult r = api_.cuModuleGetFunction(&fn, module, compiled.kernel_name.c_str()); r != cuda::kSuccess) {
      api_.cuModuleUnload(module);
      return note(cuda_error(api_, "no kernel '" + compiled.kernel_name + "' in the module", r, ErrorCode::kCompile));
    }
    ResourceReport res = compiled.resources;
    int v = 0;
    if (api_.cuFuncGetAttribute(&v, cuda::kFuncNumRegs, fn) == cuda::kSuccess) res.registers = v;
    if (api_.cuFuncGetAttribute(&v, cuda::kFuncMaxThreadsPerBlock, fn) == cuda::kSuccess) res.max_block_threads = v;
    if (api_.cuFuncGetAttribute(&v, cuda::kFuncLocalSizeBytes, fn) == cuda::kSuccess) res.private_mem_bytes = v;
    int static_shared = 0;
    api_.cuFuncGetAttribute(&static_shared, cuda::kFuncSharedSizeBytes, fn);
    auto declared = module_dynamic_shared_bytes<cuda::CUdeviceptr>(
        [&](cuda::CUdeviceptr* address, std::size_t* size) {
          return api_.cuModuleGetGlobal(address, size, module, kDynamicSharedSymbol) == cuda::kSuccess;
        },
        [&](int* value, cuda::CUdeviceptr address) -> Status {
          if (CUresult r = api_.cuMemcpyDtoH(value, address, sizeof(int)); r != cuda::kSuccess) {
            return cuda_error(api_, std::string("reading ") + kDynamicSharedSymbol, r);
          }
          return ok_status();
        });
    if (!declared.ok()) {
      api_.cuModuleUnload(module);
      return note(declared.error());
    }
    int dynamic_shared = *declared;
    if (dynamic_shared == 0 && compiled.resources.local_mem_bytes > static_shared) {
      // Not readable through the driver: what NVRTC recorded at compile time.
      dynamic_shared = static_cast<int>(compiled.resources.local_mem_bytes - static_shared);
    }
    if (dynamic_shared > 0) {
      // Above 48 KB a kernel must opt in; setting it below is harmless.
      if (CUresult r = api_.cuFuncSetAttribute(fn, cuda::kFuncMaxDynamicSharedSizeBytes, dynamic_shared);
          r != cuda::kSuccess) {
        api_.cuModuleUnload(module);
        return note(Error{ErrorCode::kResource,
                          compiled.kernel_name + " needs " + std::to_string(dynamic_shared) +
                              " bytes of dynamic shared memory: " + cuda::error_text(api_, r),
                          {}});
      }
    }
    res.local_mem_bytes = static_shared + dynamic_shared;
    return std::unique_ptr<Kernel>(
        std::make_unique<CudaKernel>(api_, module, fn, compiled.kernel_name, res, dynamic_shared));
  }

  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override {
    KF_TRY(enter());
    cuda::CUdeviceptr p = 0;
    if (CUresult r = api_.cuMemAlloc(&p, std::max<std::size_t>(bytes, 1)); r != cuda::kSuccess) {
      return note(cuda_error(api_, "cuMemAlloc(" + std::to_string(bytes) + " bytes)", r, ErrorCode::kResource));
    }
    return std::unique_ptr<Buffer>(std::make_unique<CudaBuffer>(api_, p, bytes));
  }

  Status write(Buffer& dst, const void* src, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kWrite, bytes, dst.size()));
    KF_TRY(enter());
    if (CUresult r = api_.cuMemcpyHtoD(static_cast<CudaBuffer&>(dst).ptr(), src, bytes); r != cuda::kSuccess) {
      return note(cuda_error(api_, "cuMemcpyHtoD", r));
    }
    return ok_status();
  }

  Status read(const Buffer& src, void* dst, std::size_t bytes) override {
    KF_TRY(check_transfer_size(Transfer::kRead, bytes, src.size()));
    KF_TRY(enter());
    if (CUresult r = api_.cuMemcpyDtoH(dst, static_cast<const CudaBuffer&>(src).ptr(), bytes); r != cuda::kSuccess) {
      return note(cuda_error(api_, "cuMemcpyDtoH", r));
    }
    return ok_status();
  }

  Result<double> launch(Kernel& kernel, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    if (auto* call = dynamic_cast<LibraryKernel*>(&kernel)) return call->run(args, g, on_running);
    if (on_running) on_running();  // the code exists once loaded
    auto& k = static_cast<CudaKernel&>(kernel);
    KF_TRY(check_launch_geometry(k, g, {}, {.block_threads = "CUDA_ERROR_INVALID_VALUE at launch"}));
    KF_TRY(enter());
    auto params = PackedArgs<cuda::CUdeviceptr>::of<CudaBuffer>(args);
    KF_TRY(ensure_events());
    if (CUresult r = api_.cuEventRecord(start_, stream_); r != cuda::kSuccess) return note(cuda_error(api_, "cuEventRecord", r));
    CUresult r =
        api_.cuLaunchKernel(k.fn(), static_cast<unsigned>(g.grid[0]), static_cast<unsigned>(g.grid[1]),
                            static_cast<unsigned>(g.grid[2]), static_cast<unsigned>(g.block[0]),
                            static_cast<unsigned>(g.block[1]), static_cast<unsigned>(g.block[2]),
                            static_cast<unsigned>(k.dynamic_shared()), stream_, params.params(), nullptr);
    if (r != cuda::kSuccess) {
      // Invalid value at launch: block or shared memory beyond what the device allows.
      return note(cuda_error(api_, "cuLaunchKernel(" + k.name() + ")", r,
                             r == cuda::kErrorInvalidValue ? ErrorCode::kResource : ErrorCode::kLaunch));
    }
    if (CUresult e = api_.cuEventRecord(end_, stream_); e != cuda::kSuccess) return note(cuda_error(api_, "cuEventRecord", e));
    if (CUresult e = api_.cuEventSynchronize(end_); e != cuda::kSuccess) {
      return note(cuda_error(api_, k.name() + " failed while running", e));
    }
    float ms = 0;
    if (CUresult e = api_.cuEventElapsedTime(&ms, start_, end_); e != cuda::kSuccess) {
      return note(cuda_error(api_, "cuEventElapsedTime", e));
    }
    return static_cast<double>(ms);
  }

  Status flush_cache() override {
    KF_TRY(enter());
    if (!flush_buffer_) {
      KF_TRY_ASSIGN(buf, allocate(cache_flush().bytes));
      flush_buffer_ = std::move(buf);
    }
    ++flush_pattern_;
    auto& b = static_cast<CudaBuffer&>(*flush_buffer_);
    if (CUresult r = api_.cuMemsetD32(b.ptr(), flush_pattern_, b.size() / 4); r != cuda::kSuccess) {
      return note(cuda_error(api_, "cache flush (cuMemsetD32)", r));
    }
    if (CUresult r = api_.cuCtxSynchronize(); r != cuda::kSuccess) return note(cuda_error(api_, "cache flush", r));
    return ok_status();
  }

  /// A library's work on this device's stream, timed as a launch is.
  Result<double> timed_call(const std::function<Status(void*)>& enqueue) {
    KF_TRY(enter());
    KF_TRY(ensure_events());
    if (CUresult r = api_.cuEventRecord(start_, stream_); r != cuda::kSuccess)
      return note(cuda_error(api_, "cuEventRecord", r));
    KF_TRY(enqueue(stream_));
    if (CUresult e = api_.cuEventRecord(end_, stream_); e != cuda::kSuccess)
      return note(cuda_error(api_, "cuEventRecord", e));
    if (CUresult e = api_.cuEventSynchronize(end_); e != cuda::kSuccess) {
      return note(cuda_error(api_, "a library call failed while running", e));
    }
    float ms = 0;
    if (CUresult e = api_.cuEventElapsedTime(&ms, start_, end_); e != cuda::kSuccess) {
      return note(cuda_error(api_, "cuEventElapsedTime", e));
    }
    return static_cast<double>(ms);
  }
  Status make_current() { return enter(); }

  /// NVML's view of this GPU, found by its UUID (nvml_api.hpp); none without NVML.
  ClockReader* clock_reader() override {
    if (!clocks_tried_) {
      cuda::CUuuid uuid{};
      if (api_.cuDeviceGetUuid(&uuid, dev_) == cuda::kSuccess) {
        if (auto r = nvml::open_nvml_clock_reader(uuid_text(uuid)); r.ok()) clocks_ = std::move(r).value();
      }
      clocks_tried_ = true;
    }
    return clocks_.get();
  }

 private:
  /// Makes the context current on this thread; after a sticky error every
  /// call fails with it again.
  Status enter() {
    KF_TRY(sticky_.check());
    if (CUresult r = api_.cuCtxSetCurrent(ctx_); r != cuda::kSuccess) return note(cuda_error(api_, "cuCtxSetCurrent", r));
    return ok_status();
  }
  Error note(Error e) { return sticky_.note(std::move(e)); }
  Status ensure_events() {
    if (start_ && end_) return ok_status();
    if (CUresult r = api_.cuEventCreate(&start_, 0); r != cuda::kSuccess) return note(cuda_error(api_, "cuEventCreate", r));
    if (CUresult r = api_.cuEventCreate(&end_, 0); r != cuda::kSuccess) return note(cuda_error(api_, "cuEventCreate", r));
    return ok_status();
  }

  const DriverApi& api_;
  cuda::CUdevice dev_;
  cuda::CUcontext ctx_;
  cuda::CUstream stream_;
  DeviceInfo info_;
  std::unique_ptr<Compiler> compiler_;
  cuda::CUevent start_ = nullptr;
  cuda::CUevent end_ = nullptr;
  std::unique_ptr<Buffer> flush_buffer_;
  unsigned flush_pattern_ = 0;
  StickyError sticky_;
  std::unique_ptr<ClockReader> clocks_;
  bool clocks_tried_ = false;
};

}  // namespace

Status cuda_make_current(Device& device) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  if (!cuda) return Error::bad_input(device.info().name + " is not a CUDA device");
  return cuda->make_current();
}

Result<std::uint64_t> cuda_buffer_address(const Buffer& buffer) {
  const auto* b = dynamic_cast<const CudaBuffer*>(&buffer);
  if (!b) return Error::bad_input("a buffer that is not a CUDA device's passed to a CUDA library call");
  return static_cast<std::uint64_t>(b->ptr());
}

Result<double> cuda_timed_call(Device& device, const std::function<Status(void*)>& enqueue) {
  auto* cuda = dynamic_cast<CudaDevice*>(&device);
  if (!cuda) return Error::bad_input(device.info().name + " is not a CUDA device");
  return cuda->timed_call(enqueue);
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
  if (index >= static_cast<std::size_t>(std::max(n, 0))) {
    return Error::not_found("no device 'cuda:" + std::to_string(index) + "': " + std::to_string(n) +
                            " CUDA device(s) present");
  }
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
  return std::unique_ptr<Device>(std::make_unique<CudaDevice>(api, dev, ctx, stream, describe(api, index)));
}

}  // namespace kforge
