// HIP backend: hipRTC compiles to an AMDGPU code object for one gfx target (no
// GPU needed); the HIP runtime (libamdhip64, dlopen'ed) loads, launches and
// times. hipRTC and PoCL must never compile in one process (LLVM 15's
// command-line registry, docs/architecture.md): nothing here touches OpenCL.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

namespace hip {
struct RuntimeApi;
}

struct HiprtcOutput {
  CompiledKernel kernel;       ///< binary = the code object
  AmdKernelMetadata metadata;  ///< the kernel's entry in the metadata note (empty without LLVM)
};

/// Compiles with hipRTC for `arch` ("gfx90a"): options --gpu-architecture=<arch>
/// -O3 -std=c++17 plus `options`. The resource report comes from the code
/// object's metadata note: registers = VGPRs + AGPRs, local_mem_bytes = static
/// LDS, private_mem_bytes = scratch per work-item, spill_stores and
/// spill_loads = VGPRs + SGPRs spilled (a count of registers, not bytes),
/// max_block_threads = .max_flat_workgroup_size. Architectures the loaded
/// hipRTC is known to abort on (gfx94x, gfx95x, gfx11xx with HIP < 6) are refused with
/// kUnsupported before compiling. Failure: kCompile with the log as context.
Result<HiprtcOutput> hiprtc_compile(const std::string& source, const std::string& kernel_name,
                                    const std::string& arch, const std::string& options);

/// The resource report of a kernel's code-object metadata (as hiprtc_compile
/// describes it); the offline compiler's report is the same.
ResourceReport amd_resource_report(const AmdKernelMetadata& kernel);

/// Whether the loaded hipRTC is known to abort on `arch` (hiprtc_compile
/// refuses it); false without hipRTC.
bool hiprtc_refuses(const std::string& arch);

/// "hipRTC (HIP 5.2.21153)", or why hipRTC cannot be loaded.
Result<std::string> hiprtc_version();

std::unique_ptr<Compiler> make_hiprtc_compiler(const std::string& arch);

/// Every HIP device the runtime reports; empty (never an error, nothing
/// printed) without libamdhip64 or without an AMD GPU (hipErrorNoDevice).
std::vector<DeviceInfo> list_hip_devices();

Result<std::unique_ptr<Device>> open_hip_device(std::size_t index);
/// The same over `api`'s entry points (the loaded runtime's, or a test's
/// fakes), which must outlive the device.
Result<std::unique_ptr<Device>> open_hip_device(const hip::RuntimeApi& api, std::size_t index);

/// What a library call on a HIP device (hipBLASLt, blaslt_gemm.hpp)
/// needs from it, as cuda_backend.hpp's for CUDA: the device current on
/// this thread, a buffer's address, and a call on the device's stream timed
/// with the events a launch is timed with. kBadInput for another backend's.
Status hip_make_current(Device& device);
Result<void*> hip_buffer_address(const Buffer& buffer);
Result<double> hip_timed_call(Device& device, const std::function<Status(void* stream)>& enqueue);
Status hip_enqueued_call(Device& device, const std::function<Status(void* stream)>& enqueue);

}  // namespace kforge
