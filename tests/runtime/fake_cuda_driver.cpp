// The CUDA driver's entry points over the fake GPU (fake_gpu_driver.hpp):
// what only CUDA has here, and the table.
#include <array>
#include <cstring>

#include "tests/runtime/fake_gpu_entry_points.hpp"

namespace kforge::test {

namespace {

using namespace cuda;

CUresult cuInit(unsigned) {
  return kSuccess;
}
CUresult cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}

CUresult cuGetErrorName(CUresult r, const char** name) {
  const FakeError* e = fake_error(r);
  if (!e) return kErrorInvalidValue;
  *name = e->cuda_name;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult r, const char** text) {
  const FakeError* e = fake_error(r);
  if (!e) return kErrorInvalidValue;
  *text = e->text;
  return kSuccess;
}

constexpr char kName[] = "Fake CUDA GPU";

CUresult cuDeviceGet(CUdevice* d, int i) {
  *d = i;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attribute, CUdevice) {
  *v = fake::attribute_value(attribute, {{kComputeCapabilityMajor, 9},
                                         {kMaxThreadsPerBlock, 1024},
                                         {kMaxSharedMemoryPerBlock, 48 * 1024},
                                         {kMaxSharedMemoryPerBlockOptin, 227 * 1024},
                                         {kWarpSize, 32},
                                         {kL2CacheSize, 1 << 20},
                                         {kMultiprocessorCount, 4}});
  return kSuccess;
}
CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice) {
  std::memset(uuid->bytes, 0xab, sizeof uuid->bytes);
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  *c = reinterpret_cast<CUcontext>(std::uintptr_t{0xc0});
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) {
  return fake::gpu().take_failure(FakeOp::kReleaseContext);
}
CUresult cuCtxSetCurrent(CUcontext) {
  return fake::gpu().take_failure(FakeOp::kMakeCurrent);
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
  FakeGpu& g = FakeGpu::get();
  if (int e = g.take_failure(FakeOp::kSetAttribute)) return e;
  if (attribute == kFuncMaxDynamicSharedSizeBytes) g.set_dynamic_shared = value;
  return kSuccess;
}

CUresult cuLaunchKernelEx(const LaunchConfig* c, CUfunction f, void** params, void**) {
  const unsigned grid[] = {c->grid_x, c->grid_y, c->grid_z}, block[] = {c->block_x, c->block_y, c->block_z};
  std::array<unsigned, 3> cluster{1, 1, 1};
  for (unsigned i = 0; i < c->attribute_count; ++i) {
    const auto& a = c->attributes[i];
    if (a.id == kLaunchAttributeClusterDimension)
      cluster = {a.value.cluster_dim.x, a.value.cluster_dim.y, a.value.cluster_dim.z};
  }
  return fake::gpu().launch(*reinterpret_cast<FakeModule*>(f), grid, block, c->shared_bytes, c->stream, params,
                            cluster);
}

DriverApi make_table() {
  using namespace fake;
  return DriverApi{.lib = {},
                   .cuInit = cuInit,
                   .cuDriverGetVersion = cuDriverGetVersion,
                   .cuGetErrorName = cuGetErrorName,
                   .cuGetErrorString = cuGetErrorString,
                   .cuDeviceGetCount = device_count,
                   .cuDeviceGet = cuDeviceGet,
                   .cuDeviceGetName = device_name<kName, CUdevice>,
                   .cuDeviceGetAttribute = cuDeviceGetAttribute,
                   .cuDeviceTotalMem = total_memory<CUdevice>,
                   .cuDeviceGetUuid = cuDeviceGetUuid,
                   .cuDevicePrimaryCtxRetain = cuDevicePrimaryCtxRetain,
                   .cuDevicePrimaryCtxRelease = cuDevicePrimaryCtxRelease,
                   .cuCtxSetCurrent = cuCtxSetCurrent,
                   .cuCtxSynchronize = synchronize,
                   .cuModuleLoadData = load_module<CUmodule>,
                   .cuModuleUnload = unload_module<CUmodule>,
                   .cuModuleGetFunction = get_function<CUfunction, CUmodule>,
                   .cuModuleGetGlobal = get_global<CUdeviceptr, CUmodule>,
                   .cuFuncGetAttribute = cuFuncGetAttribute,
                   .cuFuncSetAttribute = cuFuncSetAttribute,
                   .cuLaunchKernel = launch<CUfunction, CUstream>,
                   .cuLaunchKernelEx = cuLaunchKernelEx,
                   .cuMemAlloc = allocate<CUdeviceptr>,
                   .cuMemFree = release<CUdeviceptr>,
                   .cuMemcpyHtoD = copy_in<CUdeviceptr, const void*>,
                   .cuMemcpyDtoH = copy_out<CUdeviceptr>,
                   .cuMemsetD32 = memset32<CUdeviceptr, unsigned>,
                   .cuStreamCreate = create_stream<CUstream, unsigned>,
                   .cuStreamDestroy = destroy_stream<CUstream>,
                   .cuStreamSynchronize = synchronize_event<CUstream>,
                   .cuEventCreate = create_event<CUevent, unsigned>,
                   .cuEventDestroy = destroy_event<CUevent>,
                   .cuEventRecord = record_event<CUevent, CUstream>,
                   .cuEventSynchronize = synchronize_event<CUevent>,
                   .cuEventElapsedTime = elapsed_ms<CUevent>};
}

}  // namespace

const cuda::DriverApi& fake_cuda_driver() {
  static const DriverApi api = make_table();
  return api;
}

}  // namespace kforge::test
