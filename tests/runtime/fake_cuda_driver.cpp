// The CUDA driver's entry points over the fake GPU (fake_gpu_driver.hpp).
#include <cstring>

#include "fake_gpu_driver.hpp"

namespace kforge::test {

namespace {

using namespace cuda;

FakeGpu& gpu(const char* call) {
  ++FakeGpu::get().calls[call];
  return FakeGpu::get();
}

FakeModule* module_of(CUmodule m) {
  return reinterpret_cast<FakeModule*>(m);
}
CUstream_st* const kStream = reinterpret_cast<CUstream_st*>(0x5757);

CUresult cuInit(unsigned) {
  return kSuccess;
}
CUresult cuDriverGetVersion(int* v) {
  return *v = 13000, kSuccess;
}

CUresult cuGetErrorName(CUresult r, const char** name) {
  switch (r) {
    case 1:
      *name = "CUDA_ERROR_INVALID_VALUE";
      break;
    case 2:
      *name = "CUDA_ERROR_OUT_OF_MEMORY";
      break;
    case 700:
      *name = "CUDA_ERROR_ILLEGAL_ADDRESS";
      break;
    default:
      return kErrorInvalidValue;
  }
  return kSuccess;
}

CUresult cuGetErrorString(CUresult r, const char** text) {
  switch (r) {
    case 1:
      *text = "invalid argument";
      break;
    case 2:
      *text = "out of memory";
      break;
    case 700:
      *text = "an illegal memory access was encountered";
      break;
    default:
      return kErrorInvalidValue;
  }
  return kSuccess;
}

CUresult cuDeviceGetCount(int* n) {
  return *n = 1, kSuccess;
}
CUresult cuDeviceGet(CUdevice* d, int i) {
  return *d = i, kSuccess;
}
CUresult cuDeviceGetName(char* name, int size, CUdevice) {
  std::strncpy(name, "Fake CUDA GPU", static_cast<std::size_t>(size));
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int* v, int attribute, CUdevice) {
  switch (attribute) {
    case kComputeCapabilityMajor:
      *v = 9;
      break;
    case kComputeCapabilityMinor:
      *v = 0;
      break;
    case kMaxThreadsPerBlock:
      *v = 1024;
      break;
    case kMaxSharedMemoryPerBlock:
      *v = 48 * 1024;
      break;
    case kMaxSharedMemoryPerBlockOptin:
      *v = 227 * 1024;
      break;
    case kWarpSize:
      *v = 32;
      break;
    case kL2CacheSize:
      *v = 1 << 20;
      break;
    case kMultiprocessorCount:
      *v = 4;
      break;
    default:
      *v = 0;
  }
  return kSuccess;
}

CUresult cuDeviceTotalMem(std::size_t* bytes, CUdevice) {
  return *bytes = std::size_t{1} << 30, kSuccess;
}
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice) {
  return std::memset(uuid->bytes, 0xab, 16), kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUctx_st*>(0xc0);
  return gpu(__func__), kSuccess;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  return gpu(__func__), kSuccess;
}
CUresult cuCtxSetCurrent(CUcontext) {
  return gpu(__func__).take_failure(FakeOp::kMakeCurrent);
}
CUresult cuCtxSynchronize() {
  return gpu(__func__).take_failure(FakeOp::kSynchronize);
}

CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  return gpu(__func__).load_module(reinterpret_cast<FakeModule**>(m), image);
}
CUresult cuModuleUnload(CUmodule m) {
  return gpu(__func__).unload_module(module_of(m)), kSuccess;
}
CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (module_of(m)->kernel != name) return kErrorNotFound;
  *f = reinterpret_cast<CUfunction>(m);  // a module holds one kernel
  return kSuccess;
}
CUresult cuModuleGetGlobal(CUdeviceptr* address, std::size_t* bytes, CUmodule m, const char* name) {
  std::uintptr_t a = 0;
  const int r = gpu(__func__).global(*module_of(m), name, &a, bytes);
  *address = a;
  return r;
}

CUresult cuFuncGetAttribute(int* v, int attribute, CUfunction) {
  const FakeGpu& g = FakeGpu::get();
  switch (attribute) {
    case kFuncNumRegs:
      *v = 40;
      break;
    case kFuncMaxThreadsPerBlock:
      *v = g.max_block_threads;
      break;
    case kFuncSharedSizeBytes:
      *v = g.static_shared_bytes;
      break;
    case kFuncLocalSizeBytes:
      *v = 0;
      break;
    default:
      return kErrorInvalidValue;
  }
  return kSuccess;
}
CUresult cuFuncSetAttribute(CUfunction, int attribute, int value) {
  FakeGpu& g = gpu(__func__);
  if (int e = g.take_failure(FakeOp::kSetAttribute)) return e;
  if (attribute == kFuncMaxDynamicSharedSizeBytes) g.set_dynamic_shared = value;
  return kSuccess;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, CUstream stream, void** params, void**) {
  const unsigned grid[] = {gx, gy, gz}, block[] = {bx, by, bz};
  return gpu(__func__).launch(*reinterpret_cast<FakeModule*>(f), grid, block, shared, stream, params);
}

CUresult cuMemAlloc(CUdeviceptr* p, std::size_t bytes) {
  std::uintptr_t a = 0;
  const int r = gpu(__func__).allocate(&a, bytes);
  *p = a;
  return r;
}
CUresult cuMemFree(CUdeviceptr p) {
  return gpu(__func__).release(p);
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, std::size_t n) {
  return gpu(__func__).copy_in(dst, src, n);
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, std::size_t n) {
  return gpu(__func__).copy_out(dst, src, n);
}
CUresult cuMemsetD32(CUdeviceptr dst, unsigned v, std::size_t n) {
  return gpu(__func__).memset32(dst, v, n);
}

CUresult cuStreamCreate(CUstream* s, unsigned) {
  return *s = kStream, gpu(__func__), kSuccess;
}
CUresult cuStreamDestroy(CUstream) {
  return gpu(__func__), kSuccess;
}
CUresult cuStreamSynchronize(CUstream) {
  return gpu(__func__).event_synchronize();
}
CUresult cuEventCreate(CUevent* e, unsigned) {
  if (int r = gpu(__func__).take_failure(FakeOp::kEventCreate)) return r;
  *e = reinterpret_cast<CUevent>(new int(0));
  return kSuccess;
}
CUresult cuEventDestroy(CUevent e) {
  return delete reinterpret_cast<int*>(e), gpu(__func__), kSuccess;
}
CUresult cuEventRecord(CUevent, CUstream) {
  return gpu(__func__).take_failure(FakeOp::kEventRecord);
}
CUresult cuEventSynchronize(CUevent) {
  return gpu(__func__).event_synchronize();
}
CUresult cuEventElapsedTime(float* ms, CUevent, CUevent) {
  return *ms = gpu(__func__).elapsed_ms, kSuccess;
}

DriverApi make_table() {
  DriverApi api;
  api.cuInit = cuInit;
  api.cuDriverGetVersion = cuDriverGetVersion;
  api.cuGetErrorName = cuGetErrorName;
  api.cuGetErrorString = cuGetErrorString;
  api.cuDeviceGetCount = cuDeviceGetCount;
  api.cuDeviceGet = cuDeviceGet;
  api.cuDeviceGetName = cuDeviceGetName;
  api.cuDeviceGetAttribute = cuDeviceGetAttribute;
  api.cuDeviceTotalMem = cuDeviceTotalMem;
  api.cuDeviceGetUuid = cuDeviceGetUuid;
  api.cuDevicePrimaryCtxRetain = cuDevicePrimaryCtxRetain;
  api.cuDevicePrimaryCtxRelease = cuDevicePrimaryCtxRelease;
  api.cuCtxSetCurrent = cuCtxSetCurrent;
  api.cuCtxSynchronize = cuCtxSynchronize;
  api.cuModuleLoadData = cuModuleLoadData;
  api.cuModuleUnload = cuModuleUnload;
  api.cuModuleGetFunction = cuModuleGetFunction;
  api.cuModuleGetGlobal = cuModuleGetGlobal;
  api.cuFuncGetAttribute = cuFuncGetAttribute;
  api.cuFuncSetAttribute = cuFuncSetAttribute;
  api.cuLaunchKernel = cuLaunchKernel;
  api.cuMemAlloc = cuMemAlloc;
  api.cuMemFree = cuMemFree;
  api.cuMemcpyHtoD = cuMemcpyHtoD;
  api.cuMemcpyDtoH = cuMemcpyDtoH;
  api.cuMemsetD32 = cuMemsetD32;
  api.cuStreamCreate = cuStreamCreate;
  api.cuStreamDestroy = cuStreamDestroy;
  api.cuStreamSynchronize = cuStreamSynchronize;
  api.cuEventCreate = cuEventCreate;
  api.cuEventDestroy = cuEventDestroy;
  api.cuEventRecord = cuEventRecord;
  api.cuEventSynchronize = cuEventSynchronize;
  api.cuEventElapsedTime = cuEventElapsedTime;
  return api;
}

}  // namespace

const cuda::DriverApi& fake_cuda_driver() {
  static const DriverApi api = make_table();
  return api;
}

}  // namespace kforge::test
