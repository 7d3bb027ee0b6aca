// The CUDA and HIP constants runtime/device/cuda/cuda_api.hpp and hip_api.hpp declare by
// hand (so kforge builds without either toolkit) against the toolkits' own
// headers, where the build finds them: a value that drifts from the header
// would make kforge ask the driver for the wrong attribute.
#include <catch2/catch.hpp>
#include <cstddef>

#ifdef KFORGE_HAVE_CUDA_H
#include <cuda.h>

#include "runtime/device/cuda/cuda_api.hpp"

TEST_CASE("cuda_api.hpp's constants are cuda.h's", "[cuda]") {
  using namespace kforge::cuda;
  CHECK(static_cast<int>(kSuccess) == static_cast<int>(CUDA_SUCCESS));
  CHECK(static_cast<int>(kErrorInvalidValue) == static_cast<int>(CUDA_ERROR_INVALID_VALUE));
  CHECK(static_cast<int>(kErrorOutOfMemory) == static_cast<int>(CUDA_ERROR_OUT_OF_MEMORY));
  CHECK(static_cast<int>(kErrorStubLibrary) == static_cast<int>(CUDA_ERROR_STUB_LIBRARY));
  CHECK(static_cast<int>(kErrorNoDevice) == static_cast<int>(CUDA_ERROR_NO_DEVICE));
  CHECK(static_cast<int>(kErrorNotFound) == static_cast<int>(CUDA_ERROR_NOT_FOUND));
  CHECK(static_cast<int>(kErrorLaunchOutOfResources) == static_cast<int>(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES));
  CHECK(static_cast<int>(kMaxThreadsPerBlock) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  CHECK(static_cast<int>(kMaxSharedMemoryPerBlock) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  CHECK(static_cast<int>(kWarpSize) == static_cast<int>(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  CHECK(static_cast<int>(kClockRate) == static_cast<int>(CU_DEVICE_ATTRIBUTE_CLOCK_RATE));
  CHECK(static_cast<int>(kMultiprocessorCount) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  CHECK(static_cast<int>(kPciBusId) == static_cast<int>(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID));
  CHECK(static_cast<int>(kMemoryClockRate) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
  CHECK(static_cast<int>(kGlobalMemoryBusWidth) == static_cast<int>(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
  CHECK(static_cast<int>(kL2CacheSize) == static_cast<int>(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  CHECK(static_cast<int>(kMaxThreadsPerMultiprocessor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
  CHECK(static_cast<int>(kComputeCapabilityMajor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
  CHECK(static_cast<int>(kComputeCapabilityMinor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  CHECK(static_cast<int>(kMaxSharedMemoryPerMultiprocessor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  CHECK(static_cast<int>(kMaxRegistersPerMultiprocessor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
  CHECK(static_cast<int>(kMaxSharedMemoryPerBlockOptin) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  CHECK(static_cast<int>(kMaxBlocksPerMultiprocessor) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR));
  CHECK(static_cast<int>(kFuncMaxThreadsPerBlock) == static_cast<int>(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  CHECK(static_cast<int>(kFuncSharedSizeBytes) == static_cast<int>(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
  CHECK(static_cast<int>(kFuncLocalSizeBytes) == static_cast<int>(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
  CHECK(static_cast<int>(kFuncNumRegs) == static_cast<int>(CU_FUNC_ATTRIBUTE_NUM_REGS));
  CHECK(static_cast<int>(kFuncMaxDynamicSharedSizeBytes) == static_cast<int>(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
  CHECK(sizeof(kforge::cuda::CUuuid) == sizeof(::CUuuid));
}
#endif

#ifdef KFORGE_HAVE_HIP_H
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include "runtime/device/hip/hip_api.hpp"

TEST_CASE("hip_api.hpp's constants are hip_runtime_api.h's", "[hip]") {
  namespace hip = kforge::hip;
  CHECK(static_cast<int>(hip::kSuccess) == static_cast<int>(hipSuccess));
  CHECK(static_cast<int>(hip::kErrorInvalidValue) == static_cast<int>(hipErrorInvalidValue));
  CHECK(static_cast<int>(hip::kErrorOutOfMemory) == static_cast<int>(hipErrorOutOfMemory));
  CHECK(static_cast<int>(hip::kErrorNoDevice) == static_cast<int>(hipErrorNoDevice));
  CHECK(static_cast<int>(hip::kErrorLaunchOutOfResources) == static_cast<int>(hipErrorLaunchOutOfResources));
  CHECK(static_cast<int>(hip::kClockRate) == static_cast<int>(hipDeviceAttributeClockRate));
  CHECK(static_cast<int>(hip::kL2CacheSize) == static_cast<int>(hipDeviceAttributeL2CacheSize));
  CHECK(static_cast<int>(hip::kMaxThreadsPerBlock) == static_cast<int>(hipDeviceAttributeMaxThreadsPerBlock));
  CHECK(static_cast<int>(hip::kMaxThreadsPerMultiProcessor) == static_cast<int>(hipDeviceAttributeMaxThreadsPerMultiProcessor));
  CHECK(static_cast<int>(hip::kMemoryBusWidth) == static_cast<int>(hipDeviceAttributeMemoryBusWidth));
  CHECK(static_cast<int>(hip::kMemoryClockRate) == static_cast<int>(hipDeviceAttributeMemoryClockRate));
  CHECK(static_cast<int>(hip::kMultiprocessorCount) == static_cast<int>(hipDeviceAttributeMultiprocessorCount));
  CHECK(static_cast<int>(hip::kPciBusId) == static_cast<int>(hipDeviceAttributePciBusId));
  CHECK(static_cast<int>(hip::kPciDeviceId) == static_cast<int>(hipDeviceAttributePciDeviceId));
  CHECK(static_cast<int>(hip::kPciDomainId) == static_cast<int>(hipDeviceAttributePciDomainID));
  CHECK(static_cast<int>(hip::kMaxRegistersPerMultiprocessor) == static_cast<int>(hipDeviceAttributeMaxRegistersPerMultiprocessor));
  CHECK(static_cast<int>(hip::kMaxSharedMemoryPerBlock) == static_cast<int>(hipDeviceAttributeMaxSharedMemoryPerBlock));
  CHECK(static_cast<int>(hip::kWarpSize) == static_cast<int>(hipDeviceAttributeWarpSize));
}
#endif
