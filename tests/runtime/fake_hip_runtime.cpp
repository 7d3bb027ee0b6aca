// The HIP runtime's entry points over the fake GPU (fake_gpu_driver.hpp):
// what only HIP has here, and the table.
#include <cstring>

#include "tests/runtime/fake_gpu_entry_points.hpp"

namespace kforge::test {

namespace {

using namespace hip;

hipError_t hipInit(unsigned) {
  return kSuccess;
}
hipError_t hip_version(int* v) {
  *v = 50221153;
  return kSuccess;
}

const char* hipGetErrorName(hipError_t r) {
  const FakeError* e = fake_error(r);
  return e ? e->hip_name : nullptr;
}
const char* hipGetErrorString(hipError_t r) {
  const FakeError* e = fake_error(r);
  return e ? e->text : nullptr;
}

constexpr char kName[] = "Fake HIP GPU";

hipError_t hipSetDevice(int) {
  return fake::gpu().take_failure(FakeOp::kMakeCurrent);
}
hipError_t hipDeviceGetAttribute(int* v, int attribute, int) {
  *v = fake::attribute_value(attribute, {{kMaxThreadsPerBlock, 1024},
                                         {kMaxSharedMemoryPerBlock, 64 * 1024},
                                         {kWarpSize, 64},
                                         {kL2CacheSize, 1 << 20},
                                         {kMultiprocessorCount, 4}});
  return kSuccess;
}
hipError_t hipGetDeviceProperties(void* props, int) {
  // The name stands after other fields, as in hipDeviceProp_t.
  std::strcpy(static_cast<char*>(props) + 300, "gfx90a:sramecc+:xnack-");
  return kSuccess;
}

RuntimeApi make_table() {
  using namespace fake;
  return RuntimeApi{.lib = {},
                    .hipInit = hipInit,
                    .hipRuntimeGetVersion = hip_version,
                    .hipDriverGetVersion = hip_version,
                    .hipGetErrorName = hipGetErrorName,
                    .hipGetErrorString = hipGetErrorString,
                    .hipGetDeviceCount = device_count,
                    .hipSetDevice = hipSetDevice,
                    .hipDeviceGetName = device_name<kName, hipDevice_t>,
                    .hipDeviceGetAttribute = hipDeviceGetAttribute,
                    .hipDeviceTotalMem = total_memory<hipDevice_t>,
                    .hipGetDeviceProperties = hipGetDeviceProperties,
                    .hipDeviceSynchronize = synchronize,
                    .hipModuleLoadData = load_module<hipModule_t>,
                    .hipModuleUnload = unload_module<hipModule_t>,
                    .hipModuleGetFunction = get_function<hipFunction_t, hipModule_t>,
                    .hipModuleGetGlobal = get_global<hipDeviceptr_t, hipModule_t>,
                    .hipModuleLaunchKernel = launch<hipFunction_t, hipStream_t>,
                    .hipMalloc = allocate<void*>,
                    .hipFree = release<void*>,
                    .hipMemcpyHtoD = copy_in<hipDeviceptr_t, void*>,
                    .hipMemcpyDtoH = copy_out<hipDeviceptr_t>,
                    .hipMemsetD32 = memset32<hipDeviceptr_t, int>,
                    .hipStreamCreate = create_stream<hipStream_t>,
                    .hipStreamDestroy = destroy_stream<hipStream_t>,
                    .hipEventCreate = create_event<hipEvent_t>,
                    .hipEventDestroy = destroy_event<hipEvent_t>,
                    .hipEventRecord = record_event<hipEvent_t, hipStream_t>,
                    .hipEventSynchronize = synchronize_event<hipEvent_t>,
                    .hipEventElapsedTime = elapsed_ms<hipEvent_t>};
}

}  // namespace

const hip::RuntimeApi& fake_hip_runtime() {
  static const RuntimeApi api = make_table();
  return api;
}

}  // namespace kforge::test
