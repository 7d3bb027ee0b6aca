// A device that runs Triton templates under Triton's interpreter on the
// host CPU (TRITON_INTERPRET=1, triton/kforge_triton/interpret.py), so that
// a Triton kernel's logic is checked against the operator's reference
// without a GPU. Its selector is "interpret:0"; it is opened by name only
// (never listed, never chosen by "auto"). Its buffers are host memory; a
// launch writes the kernel's arrays to files, runs the interpreter in a
// child process with poisoned guards around every array (the interpreter
// makes the kernel's workspaces, and fails a launch that leaves a zeroed
// one non-zero), and reads every array back. Its launches say nothing about speed (Device::times_kernels
// is false): the tuner stores what passes as validated, never timed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/triton_spec.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// The interpreter as a device: one, described without starting Python.
std::vector<DeviceInfo> list_interpreter_devices();
/// kNotFound past index 0; kUnsupported with the reason where Python cannot
/// import Triton and the helpers.
Result<std::unique_ptr<Device>> open_interpreter_device(std::size_t index);

/// What the interpreter device loads for a Triton instance: `request` is
/// the instance's source (generator/instance.cpp, triton_source), `kernel_text`
/// the template's Python file. Its ABI has the kernel's parameters from the
/// signature and the instance's argument map; no scratch pointers.
Result<CompiledKernel> interpreted_kernel(const std::string& request, const std::string& kernel_text);

}  // namespace kforge
