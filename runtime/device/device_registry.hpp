// Finds devices across backends and resolves selectors ("auto", "opencl:N").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/backend.hpp"

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

/// The device "auto" means for process `local_rank` (0-based) of several on
/// one node (MPI ranks, Slurm tasks): local rank r gets GPU r mod G of the
/// best kind present (native backend first, as "auto" orders them), so G
/// GPUs serve G ranks one each; where no GPU is present every rank gets the
/// device "auto" would open (several may share a CPU device). Pure: from a
/// device list, returns a selector ("cuda:1", "opencl:0").
std::string local_rank_selector(const std::vector<DeviceInfo>& devices, int local_rank);

/// True for "auto" and "<backend>:<N>": selectors that only a live device can
/// answer, as opposed to texts matched against stored devices.
bool is_live_selector(std::string_view selector);

}  // namespace kforge
