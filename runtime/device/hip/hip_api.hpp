// The parts of the HIP runtime and hipRTC that kforge calls, declared here and
// bound at run time with dlopen (one function pointer per symbol), so kforge
// builds without ROCm. Enum values are those of ROCm 5.2's headers (Debian 12).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "runtime/platform/dynamic_library.hpp"

namespace kforge::hip {

using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;

inline constexpr hipError_t kSuccess = 0;
inline constexpr hipError_t kErrorInvalidValue = 1;
inline constexpr hipError_t kErrorOutOfMemory = 2;
inline constexpr hipError_t kErrorNoDevice = 100;
inline constexpr hipError_t kErrorLaunchOutOfResources = 701;

// hipDeviceAttribute_t (ROCm 5.2)
enum DeviceAttribute : int {
  kClockRate = 5,  ///< kHz
  kL2CacheSize = 19,
  kMaxThreadsPerBlock = 56,
  kMaxThreadsPerMultiProcessor = 57,
  kMemoryBusWidth = 59,
  kMemoryClockRate = 60,  ///< kHz
  kMultiprocessorCount = 63,
  kPciBusId = 67,
  kPciDeviceId = 68,
  kPciDomainId = 69,
  kMaxRegistersPerMultiprocessor = 72,
  kMaxSharedMemoryPerBlock = 74,
  kWarpSize = 87,
};

/// The HIP runtime (libamdhip64.so). Loaded once per process.
struct RuntimeApi {
  DynamicLibrary lib;
  hipError_t (*hipInit)(unsigned) = nullptr;
  hipError_t (*hipRuntimeGetVersion)(int*) = nullptr;
  hipError_t (*hipDriverGetVersion)(int*) = nullptr;
  const char* (*hipGetErrorName)(hipError_t) = nullptr;
  const char* (*hipGetErrorString)(hipError_t) = nullptr;
  hipError_t (*hipGetDeviceCount)(int*) = nullptr;
  hipError_t (*hipSetDevice)(int) = nullptr;
  hipError_t (*hipDeviceGetName)(char*, int, hipDevice_t) = nullptr;
  hipError_t (*hipDeviceGetAttribute)(int*, int, int) = nullptr;
  hipError_t (*hipDeviceTotalMem)(std::size_t*, hipDevice_t) = nullptr;
  hipError_t (*hipGetDeviceProperties)(void*, int) = nullptr;
  hipError_t (*hipDeviceSynchronize)() = nullptr;
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*hipModuleUnload)(hipModule_t) = nullptr;
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*hipModuleGetGlobal)(hipDeviceptr_t*, std::size_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void**, void**) = nullptr;
  hipError_t (*hipMalloc)(void**, std::size_t) = nullptr;
  hipError_t (*hipFree)(void*) = nullptr;
  hipError_t (*hipMemcpyHtoD)(hipDeviceptr_t, void*, std::size_t) = nullptr;
  hipError_t (*hipMemcpyDtoH)(void*, hipDeviceptr_t, std::size_t) = nullptr;
  hipError_t (*hipMemsetD32)(hipDeviceptr_t, int, std::size_t) = nullptr;
  hipError_t (*hipStreamCreate)(hipStream_t*) = nullptr;
  hipError_t (*hipStreamDestroy)(hipStream_t) = nullptr;
  hipError_t (*hipEventCreate)(hipEvent_t*) = nullptr;
  hipError_t (*hipEventDestroy)(hipEvent_t) = nullptr;
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*hipEventSynchronize)(hipEvent_t) = nullptr;
  hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t) = nullptr;

  /// kNotFound naming libamdhip64 or the missing symbol. Kept for the process.
  static const Result<const RuntimeApi*>& get();
  /// "5.2.21153" from hipRuntimeGetVersion.
  std::string version() const;
  int version_number() const;  ///< e.g. 50221153
};

using hiprtcResult = int;
using hiprtcProgram = struct _hiprtcProgram*;

/// hipRTC: libhiprtc.so (ROCm 5.3+) or, before it, inside libamdhip64.so.
struct RtcApi {
  DynamicLibrary lib;
  const char* (*hiprtcGetErrorString)(hiprtcResult) = nullptr;
  hiprtcResult (*hiprtcCreateProgram)(hiprtcProgram*, const char*, const char*, int, const char**,
                                      const char**) = nullptr;
  hiprtcResult (*hiprtcDestroyProgram)(hiprtcProgram*) = nullptr;
  hiprtcResult (*hiprtcCompileProgram)(hiprtcProgram, int, const char**) = nullptr;
  hiprtcResult (*hiprtcGetProgramLogSize)(hiprtcProgram, std::size_t*) = nullptr;
  hiprtcResult (*hiprtcGetProgramLog)(hiprtcProgram, char*) = nullptr;
  hiprtcResult (*hiprtcGetCodeSize)(hiprtcProgram, std::size_t*) = nullptr;
  hiprtcResult (*hiprtcGetCode)(hiprtcProgram, char*) = nullptr;

  static const Result<const RtcApi*>& get();
};

/// "hipErrorIllegalAddress (an illegal memory access was encountered)".
std::string error_text(const RuntimeApi& api, hipError_t r);

/// Errors after which the HIP context is unusable (illegal address, launch failure).
bool is_sticky(hipError_t r);

}  // namespace kforge::hip
