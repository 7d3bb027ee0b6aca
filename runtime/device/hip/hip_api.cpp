// Binds the HIP runtime and hipRTC entry points with dlopen/dlsym.
#include "runtime/device/hip/hip_api.hpp"

#include <cstdlib>

namespace kforge::hip {

namespace {

std::vector<std::string> rocm_dirs() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("ROCM_PATH")) dirs.push_back(p);
  dirs.push_back("/opt/rocm");
  return dirs;
}

#define KF_BIND(api, sym) KF_TRY((api).lib.bind((api).sym, #sym))

Result<const RuntimeApi*> load_runtime() {
  static RuntimeApi api;
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("HIP runtime",
                                          library_candidates({"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
                                                             "KFORGE_ROCM_PATH", rocm_dirs())));
  api.lib = std::move(lib);
  KF_BIND(api, hipInit);
  KF_BIND(api, hipRuntimeGetVersion);
  KF_BIND(api, hipDriverGetVersion);
  KF_BIND(api, hipGetErrorName);
  KF_BIND(api, hipGetErrorString);
  KF_BIND(api, hipGetDeviceCount);
  KF_BIND(api, hipSetDevice);
  KF_BIND(api, hipDeviceGetName);
  KF_BIND(api, hipDeviceGetAttribute);
  KF_BIND(api, hipDeviceTotalMem);
  // ROCm 6 renamed the struct-returning query; its layout differs, and kforge
  // only scans it for the gfx target name (hip_backend.cpp).
  if (!api.lib.bind(api.hipGetDeviceProperties, "hipGetDevicePropertiesR0600").ok()) {
    KF_BIND(api, hipGetDeviceProperties);
  }
  KF_BIND(api, hipDeviceSynchronize);
  KF_BIND(api, hipModuleLoadData);
  KF_BIND(api, hipModuleUnload);
  KF_BIND(api, hipModuleGetFunction);
  KF_BIND(api, hipModuleGetGlobal);
  KF_BIND(api, hipModuleLaunchKernel);
  KF_BIND(api, hipMalloc);
  KF_BIND(api, hipFree);
  KF_BIND(api, hipMemcpyHtoD);
  KF_BIND(api, hipMemcpyDtoH);
  KF_BIND(api, hipMemsetD32);
  KF_BIND(api, hipStreamCreate);
  KF_BIND(api, hipStreamDestroy);
  KF_BIND(api, hipEventCreate);
  KF_BIND(api, hipEventDestroy);
  KF_BIND(api, hipEventRecord);
  KF_BIND(api, hipEventSynchronize);
  KF_BIND(api, hipEventElapsedTime);
  return &api;
}

Result<const RtcApi*> load_rtc() {
  static RtcApi api;
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("hipRTC", library_candidates({"libhiprtc.so.6", "libhiprtc.so.5",
                                                                         "libhiprtc.so", "libamdhip64.so.5",
                                                                         "libamdhip64.so"},
                                                                        "KFORGE_ROCM_PATH", rocm_dirs())));
  api.lib = std::move(lib);
  KF_BIND(api, hiprtcGetErrorString);
  KF_BIND(api, hiprtcCreateProgram);
  KF_BIND(api, hiprtcDestroyProgram);
  KF_BIND(api, hiprtcCompileProgram);
  KF_BIND(api, hiprtcGetProgramLogSize);
  KF_BIND(api, hiprtcGetProgramLog);
  KF_BIND(api, hiprtcGetCodeSize);
  KF_BIND(api, hiprtcGetCode);
  return &api;
}

#undef KF_BIND

}  // namespace

const Result<const RuntimeApi*>& RuntimeApi::get() {
  static const Result<const RuntimeApi*> api = load_runtime();
  return api;
}

const Result<const RtcApi*>& RtcApi::get() {
  static const Result<const RtcApi*> api = load_rtc();
  return api;
}

int RuntimeApi::version_number() const {
  int v = 0;
  return hipRuntimeGetVersion(&v) == kSuccess ? v : 0;
}

std::string RuntimeApi::version() const {
  const int v = version_number();
  if (v <= 0) return "unknown";
  // HIP_VERSION = major * 10^7 + minor * 10^5 + patch
  return std::to_string(v / 10000000) + "." + std::to_string((v / 100000) % 100) + "." + std::to_string(v % 100000);
}

std::string error_text(const RuntimeApi& api, hipError_t r) {
  const char* name = api.hipGetErrorName ? api.hipGetErrorName(r) : nullptr;
  const char* text = api.hipGetErrorString ? api.hipGetErrorString(r) : nullptr;
  std::string out = name ? name : "hipError " + std::to_string(r);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

bool is_sticky(hipError_t r) {
  switch (r) {
    case 700:  // hipErrorIllegalAddress
    case 702:  // hipErrorLaunchTimeOut
    case 710:  // hipErrorAssert
    case 719:  // hipErrorLaunchFailure
    case 999:  // hipErrorUnknown
      return true;
    default:
      return false;
  }
}

}  // namespace kforge::hip
