// Finds devices across backends and resolves selectors ("auto", "opencl:N").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"

namespace kforge {

/// Every device every enabled backend can see.
std::vector<DeviceInfo> list_devices();

/// "auto" picks the best device present: a GPU through CUDA or HIP, then a GPU
/// through OpenCL, then an accelerator, then a CPU; then the most compute
/// units. "opencl:N", "cuda:N", "hip:N" name one directly. Any other text
/// picks, in the same order, the best present device it matches as a stored
/// device would (device_matches: key, arch, backend:arch, part of the name).
Result<std::unique_ptr<Device>> open_device(const std::string& selector);

/// The identity of the device open_device(selector) would open, without opening it.
Result<DeviceInfo> resolve_device(const std::string& selector);

/// True for "auto" and "<backend>:<N>": selectors that only a live device can
/// answer, as opposed to texts matched against stored devices.
bool is_live_selector(std::string_view selector);

}  // namespace kforge
