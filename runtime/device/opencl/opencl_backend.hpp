// OpenCL backend: any OpenCL 1.2+ device, PoCL on CPUs in CI.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "runtime/device/backend.hpp"

namespace kforge {

/// Every OpenCL device of every platform, in platform then device order;
/// selectors "opencl:0", "opencl:1", ... No platform is not an error (empty list).
std::vector<DeviceInfo> list_opencl_devices();

/// Opens the device `index` of list_opencl_devices() with a profiling queue.
Result<std::unique_ptr<Device>> open_opencl_device(std::size_t index);

/// How PoCL makes machine code: at a kernel's first launch, kept in its
/// on-disk kernel cache unless POCL_KERNEL_CACHE=0 (read at each call).
CodeGeneration pocl_code_generation();

/// The name of an OpenCL error code ("CL_INVALID_WORK_GROUP_SIZE"), or
/// "CL_UNKNOWN_ERROR". Takes an int so this header needs no OpenCL headers.
const char* cl_error_name(int code);

}  // namespace kforge
