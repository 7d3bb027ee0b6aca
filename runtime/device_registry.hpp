// Finds devices across backends and resolves selectors ("auto", "opencl:N").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"

namespace kforge {

/// Every device every enabled backend can see.
std::vector<DeviceInfo> list_devices();

/// "auto" picks the best device present: a GPU through CUDA or HIP, then a GPU
/// through OpenCL, then an accelerator, then a CPU; then the most compute
/// units. "opencl:N", "cuda:N", "hip:N" name one directly.
Result<std::unique_ptr<Device>> open_device(const std::string& selector);

}  // namespace kforge
