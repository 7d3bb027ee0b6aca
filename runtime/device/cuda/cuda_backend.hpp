// CUDA backend: NVRTC compiles to a cubin for one exact architecture (no GPU
// needed); the driver (libcuda.so.1, dlopen'ed) loads, launches and times.
// Nothing links CUDA at build time: without a driver there are no devices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/backend.hpp"

namespace kforge {

namespace cuda {
struct DriverApi;
}

/// Everything one NVRTC compilation produced.
struct NvrtcOutput {
  CompiledKernel kernel;   ///< binary = cubin for the requested architecture
  std::string ptx;
  std::int64_t dynamic_shared_bytes = 0;  ///< from the module's kf_dynamic_shared_bytes, 0 when absent
};

/// Compiles with NVRTC for `arch` ("sm_90"): options -arch=<arch> -std=c++17
/// --ptxas-options=-v plus `options` (space separated). The resource report
/// comes from ptxas' verbose log for `kernel_name`: registers, static shared
/// memory + dynamic_shared_bytes (local_mem_bytes), stack frame
/// (private_mem_bytes), spill stores/loads (bytes), and the launch bound
/// (.maxntid / .reqntid in the PTX) as max_block_threads. A failure is
/// kCompile "build failed for <kernel>: <first error line>" with the whole log
/// as context; no NVRTC is kNotFound naming the library.
Result<NvrtcOutput> nvrtc_compile(const std::string& source, const std::string& kernel_name,
                                  const std::string& arch, const std::string& options);

/// NVRTC's version ("13.0"), or the error saying why NVRTC cannot be loaded.
Result<std::string> nvrtc_version();

/// Architectures the loaded NVRTC can compile for ("sm_75", ...).
Result<std::vector<std::string>> nvrtc_supported_archs();

/// A Compiler for one architecture (what a compile-only target uses).
std::unique_ptr<Compiler> make_nvrtc_compiler(const std::string& arch);

/// Every CUDA device the driver reports; empty (never an error) when
/// libcuda.so.1 is absent, only the stub is found, or cuInit reports no device.
std::vector<DeviceInfo> list_cuda_devices();

/// Opens CUDA device `index` (its primary context and one stream).
Result<std::unique_ptr<Device>> open_cuda_device(std::size_t index);
/// The same over `api`'s entry points (the loaded driver's, or a test's
/// fakes), which must outlive the device.
Result<std::unique_ptr<Device>> open_cuda_device(const cuda::DriverApi& api, std::size_t index);

/// What a library call on a CUDA device (cuBLASLt, blaslt_gemm.hpp) needs
/// from it: the device's context current on this thread (the library finds
/// it there), a buffer's device address, and a call on the device's stream
/// timed with the events a kernel's launch is timed with. kBadInput where
/// the device or buffer is not the CUDA backend's.
Status cuda_make_current(Device& device);
Result<std::uint64_t> cuda_buffer_address(const Buffer& buffer);
/// Runs `enqueue(stream)` between the two events and waits for the second;
/// the device time between them in ms. `enqueue`'s error is returned as is.
Result<double> cuda_timed_call(Device& device, const std::function<Status(void* stream)>& enqueue);
/// Runs `enqueue(stream)` on the device's stream and returns without waiting.
Status cuda_enqueued_call(Device& device, const std::function<Status(void* stream)>& enqueue);

/// Why the CUDA driver cannot be used here ("CUDA driver (libcuda.so.1) not
/// found: ..."), or empty when it loads and initializes.
std::string cuda_unavailable_reason();

}  // namespace kforge
