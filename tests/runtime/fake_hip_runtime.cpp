// The HIP runtime's entry points over the fake GPU (fake_gpu_driver.hpp).
#include <cstring>

#include "fake_gpu_driver.hpp"

namespace kforge::test {

namespace {

using namespace hip;

FakeGpu& gpu(const char* call) {
  ++FakeGpu::get().calls[call];
  return FakeGpu::get();
}

std::uintptr_t address_of(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}
FakeModule* module_of(hipModule_t m) {
  return reinterpret_cast<FakeModule*>(m);
}
ihipStream_t* const kStream = reinterpret_cast<ihipStream_t*>(0x4848);

hipError_t hipInit(unsigned) {
  return kSuccess;
}
hipError_t hipRuntimeGetVersion(int* v) {
  return *v = 50221153, kSuccess;
}
hipError_t hipDriverGetVersion(int* v) {
  return *v = 50221153, kSuccess;
}

const char* hipGetErrorName(hipError_t r) {
  switch (r) {
    case 1:
      return "hipErrorInvalidValue";
    case 2:
      return "hipErrorOutOfMemory";
    case 700:
      return "hipErrorIllegalAddress";
    default:
      return nullptr;
  }
}

const char* hipGetErrorString(hipError_t r) {
  switch (r) {
    case 1:
      return "invalid argument";
    case 2:
      return "out of memory";
    case 700:
      return "an illegal memory access was encountered";
    default:
      return nullptr;
  }
}

hipError_t hipGetDeviceCount(int* n) {
  return *n = 1, kSuccess;
}
hipError_t hipSetDevice(int) {
  return gpu(__func__).take_failure(FakeOp::kMakeCurrent);
}
hipError_t hipDeviceGetName(char* name, int size, hipDevice_t) {
  std::strncpy(name, "Fake HIP GPU", static_cast<std::size_t>(size));
  return kSuccess;
}

hipError_t hipDeviceGetAttribute(int* v, int attribute, int) {
  switch (attribute) {
    case kMaxThreadsPerBlock:
      *v = 1024;
      break;
    case kMaxSharedMemoryPerBlock:
      *v = 64 * 1024;
      break;
    case kWarpSize:
      *v = 64;
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

hipError_t hipDeviceTotalMem(std::size_t* bytes, hipDevice_t) {
  return *bytes = std::size_t{1} << 30, kSuccess;
}
hipError_t hipGetDeviceProperties(void* props, int) {
  // The name stands after other fields, as in hipDeviceProp_t.
  std::strcpy(static_cast<char*>(props) + 300, "gfx90a:sramecc+:xnack-");
  return kSuccess;
}
hipError_t hipDeviceSynchronize() {
  return gpu(__func__).take_failure(FakeOp::kSynchronize);
}

hipError_t hipModuleLoadData(hipModule_t* m, const void* image) {
  return gpu(__func__).load_module(reinterpret_cast<FakeModule**>(m), image);
}
hipError_t hipModuleUnload(hipModule_t m) {
  return gpu(__func__).unload_module(module_of(m)), kSuccess;
}
hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  if (module_of(m)->kernel != name) return 500;  // hipErrorNotFound
  *f = reinterpret_cast<hipFunction_t>(m);       // a module holds one kernel
  return kSuccess;
}
hipError_t hipModuleGetGlobal(hipDeviceptr_t* address, std::size_t* bytes, hipModule_t m, const char* name) {
  std::uintptr_t a = 0;
  const int r = gpu(__func__).global(*module_of(m), name, &a, bytes);
  *address = reinterpret_cast<void*>(a);
  return r;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, hipStream_t stream, void** params,
                                 void**) {
  const unsigned grid[] = {gx, gy, gz}, block[] = {bx, by, bz};
  return gpu(__func__).launch(*reinterpret_cast<FakeModule*>(f), grid, block, shared, stream, params);
}

hipError_t hipMalloc(void** p, std::size_t bytes) {
  std::uintptr_t a = 0;
  const int r = gpu(__func__).allocate(&a, bytes);
  *p = reinterpret_cast<void*>(a);
  return r;
}
hipError_t hipFree(void* p) {
  return gpu(__func__).release(address_of(p));
}
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, std::size_t n) {
  return gpu(__func__).copy_in(address_of(dst), src, n);
}
hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, std::size_t n) {
  return gpu(__func__).copy_out(dst, address_of(src), n);
}
hipError_t hipMemsetD32(hipDeviceptr_t dst, int v, std::size_t n) {
  return gpu(__func__).memset32(address_of(dst), static_cast<unsigned>(v), n);
}

hipError_t hipStreamCreate(hipStream_t* s) {
  return *s = kStream, gpu(__func__), kSuccess;
}
hipError_t hipStreamDestroy(hipStream_t) {
  return gpu(__func__), kSuccess;
}
hipError_t hipEventCreate(hipEvent_t* e) {
  if (int r = gpu(__func__).take_failure(FakeOp::kEventCreate)) return r;
  *e = reinterpret_cast<hipEvent_t>(new int(0));
  return kSuccess;
}
hipError_t hipEventDestroy(hipEvent_t e) {
  return delete reinterpret_cast<int*>(e), gpu(__func__), kSuccess;
}
hipError_t hipEventRecord(hipEvent_t, hipStream_t) {
  return gpu(__func__).take_failure(FakeOp::kEventRecord);
}
hipError_t hipEventSynchronize(hipEvent_t) {
  return gpu(__func__).event_synchronize();
}
hipError_t hipEventElapsedTime(float* ms, hipEvent_t, hipEvent_t) {
  return *ms = gpu(__func__).elapsed_ms, kSuccess;
}

RuntimeApi make_table() {
  RuntimeApi api;
  api.hipInit = hipInit;
  api.hipRuntimeGetVersion = hipRuntimeGetVersion;
  api.hipDriverGetVersion = hipDriverGetVersion;
  api.hipGetErrorName = hipGetErrorName;
  api.hipGetErrorString = hipGetErrorString;
  api.hipGetDeviceCount = hipGetDeviceCount;
  api.hipSetDevice = hipSetDevice;
  api.hipDeviceGetName = hipDeviceGetName;
  api.hipDeviceGetAttribute = hipDeviceGetAttribute;
  api.hipDeviceTotalMem = hipDeviceTotalMem;
  api.hipGetDeviceProperties = hipGetDeviceProperties;
  api.hipDeviceSynchronize = hipDeviceSynchronize;
  api.hipModuleLoadData = hipModuleLoadData;
  api.hipModuleUnload = hipModuleUnload;
  api.hipModuleGetFunction = hipModuleGetFunction;
  api.hipModuleGetGlobal = hipModuleGetGlobal;
  api.hipModuleLaunchKernel = hipModuleLaunchKernel;
  api.hipMalloc = hipMalloc;
  api.hipFree = hipFree;
  api.hipMemcpyHtoD = hipMemcpyHtoD;
  api.hipMemcpyDtoH = hipMemcpyDtoH;
  api.hipMemsetD32 = hipMemsetD32;
  api.hipStreamCreate = hipStreamCreate;
  api.hipStreamDestroy = hipStreamDestroy;
  api.hipEventCreate = hipEventCreate;
  api.hipEventDestroy = hipEventDestroy;
  api.hipEventRecord = hipEventRecord;
  api.hipEventSynchronize = hipEventSynchronize;
  api.hipEventElapsedTime = hipEventElapsedTime;
  return api;
}

}  // namespace

const hip::RuntimeApi& fake_hip_runtime() {
  static const RuntimeApi api = make_table();
  return api;
}

}  // namespace kforge::test
