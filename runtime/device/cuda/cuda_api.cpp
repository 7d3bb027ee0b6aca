// Binds the CUDA driver and NVRTC entry points with dlopen/dlsym.
#include "runtime/device/cuda/cuda_api.hpp"

#include <cstdlib>

namespace kforge::cuda {

namespace {

std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("CUDA_PATH")) dirs.push_back(p);
  if (const char* p = std::getenv("CUDA_HOME")) dirs.push_back(p);
  dirs.push_back("/usr/local/cuda");
  return dirs;
}

#define KF_BIND(api, sym) KF_TRY((api).lib.bind((api).sym, #sym))
#define KF_BIND_AS(api, field, sym) KF_TRY((api).lib.bind((api).field, sym))

Result<const DriverApi*> load_driver() {
  static DriverApi api;
  // Only the real driver: the toolkit's stubs/libcuda.so answers
  // CUDA_ERROR_STUB_LIBRARY to everything.
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("CUDA driver", library_candidates({"libcuda.so.1"}, "KFORGE_CUDA_DRIVER_PATH",
                                                                            {"/usr/local/nvidia/lib64",
                                                                             "/usr/lib/wsl/lib"})));
  api.lib = std::move(lib);
  KF_BIND(api, cuInit);
  KF_BIND(api, cuDriverGetVersion);
  KF_BIND(api, cuGetErrorName);
  KF_BIND(api, cuGetErrorString);
  KF_BIND(api, cuDeviceGetCount);
  KF_BIND(api, cuDeviceGet);
  KF_BIND(api, cuDeviceGetName);
  KF_BIND(api, cuDeviceGetAttribute);
  KF_BIND_AS(api, cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  if (!api.lib.bind(api.cuDeviceGetUuid, "cuDeviceGetUuid_v2").ok()) KF_BIND(api, cuDeviceGetUuid);
  KF_BIND(api, cuDevicePrimaryCtxRetain);
  KF_BIND_AS(api, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  KF_BIND(api, cuCtxSetCurrent);
  KF_BIND(api, cuCtxSynchronize);
  KF_BIND(api, cuModuleLoadData);
  KF_BIND(api, cuModuleUnload);
  KF_BIND(api, cuModuleGetFunction);
  KF_BIND_AS(api, cuModuleGetGlobal, "cuModuleGetGlobal_v2");
  KF_BIND(api, cuFuncGetAttribute);
  KF_BIND(api, cuFuncSetAttribute);
  KF_BIND(api, cuLaunchKernel);
  if (!api.lib.bind(api.cuLaunchKernelEx, "cuLaunchKernelEx").ok()) api.cuLaunchKernelEx = nullptr;
  KF_BIND_AS(api, cuMemAlloc, "cuMemAlloc_v2");
  KF_BIND_AS(api, cuMemFree, "cuMemFree_v2");
  KF_BIND_AS(api, cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  KF_BIND_AS(api, cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  KF_BIND_AS(api, cuMemsetD32, "cuMemsetD32_v2");
  KF_BIND(api, cuStreamCreate);
  KF_BIND_AS(api, cuStreamDestroy, "cuStreamDestroy_v2");
  KF_BIND(api, cuStreamSynchronize);
  KF_BIND(api, cuEventCreate);
  KF_BIND_AS(api, cuEventDestroy, "cuEventDestroy_v2");
  KF_BIND(api, cuEventRecord);
  KF_BIND(api, cuEventSynchronize);
  if (!api.lib.bind(api.cuEventElapsedTime, "cuEventElapsedTime_v2").ok()) KF_BIND(api, cuEventElapsedTime);
  const CUresult r = api.cuInit(0);
  if (r != kSuccess) {
    return Error{r == kErrorNoDevice || r == kErrorStubLibrary ? ErrorCode::kNotFound : ErrorCode::kLaunch,
                 "cuInit failed: " + error_text(api, r), {}};
  }
  return &api;
}

Result<const NvrtcApi*> load_nvrtc() {
  static NvrtcApi api;
  KF_TRY_ASSIGN(lib, DynamicLibrary::open(
                         "NVRTC", library_candidates({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                                      "libnvrtc.so"},
                                                     "KFORGE_CUDA_PATH", toolkit_dirs())));
  api.lib = std::move(lib);
  KF_BIND(api, nvrtcGetErrorString);
  KF_BIND(api, nvrtcVersion);
  KF_BIND(api, nvrtcCreateProgram);
  KF_BIND(api, nvrtcDestroyProgram);
  KF_BIND(api, nvrtcCompileProgram);
  KF_BIND(api, nvrtcGetProgramLogSize);
  KF_BIND(api, nvrtcGetProgramLog);
  KF_BIND(api, nvrtcGetPTXSize);
  KF_BIND(api, nvrtcGetPTX);
  KF_BIND(api, nvrtcGetCUBINSize);
  KF_BIND(api, nvrtcGetCUBIN);
  KF_BIND(api, nvrtcGetNumSupportedArchs);
  KF_BIND(api, nvrtcGetSupportedArchs);
  return &api;
}

#undef KF_BIND
#undef KF_BIND_AS

}  // namespace

const Result<const DriverApi*>& DriverApi::get() {
  static const Result<const DriverApi*> api = load_driver();
  return api;
}

const Result<const NvrtcApi*>& NvrtcApi::get() {
  static const Result<const NvrtcApi*> api = load_nvrtc();
  return api;
}

std::string NvrtcApi::version() const {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != 0) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

bool NvrtcApi::at_least(int major, int minor) const {
  int have_major = 0, have_minor = 0;
  if (nvrtcVersion(&have_major, &have_minor) != 0) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

std::string error_text(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  std::string out = name ? name : "CUDA_ERROR_" + std::to_string(r);
  if (text) out += std::string(" (") + text + ")";
  return out;
}

bool is_sticky(CUresult r) {
  switch (r) {
    case 214:  // CUDA_ERROR_ECC_UNCORRECTABLE
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
    case 999:  // CUDA_ERROR_UNKNOWN
      return true;
    default:
      return false;
  }
}

}  // namespace kforge::cuda
