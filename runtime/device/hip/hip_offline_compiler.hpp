// The offline HIP compiler: clang-22 run as a subprocess (its LLVM never
// shares a process with PoCL's and hipRTC's LLVM 15) compiles an instance to
// an AMDGPU code object for targets hipRTC 5.2 cannot reach (gfx942, gfx950).
// Compile-only: its objects are not launched until an AMD GPU has validated
// them (docs/gpu-backends.md).
#pragma once

#include <memory>
#include <string>

#include "runtime/device/backend.hpp"
#include "runtime/device/hip/hip_backend.hpp"

namespace kforge {

/// Where the offline compiler's pieces are: the clang driver, its version and
/// the device-library directory (Debian's rocm-device-libs plus the
/// oclc_isa_version_942 / _950 files generated at build time).
struct OfflineHipToolchain {
  std::string clang;        ///< absolute path
  std::string version;      ///< "22.1.8"
  std::string device_libs;  ///< directory for --rocm-device-lib-path
};

/// The toolchain of `clang` (a program in PATH or a path) and the device
/// libraries in `device_libs`; kUnsupported with the reason when either is
/// missing.
Result<OfflineHipToolchain> find_offline_hip_toolchain(const std::string& clang,
                                                       const std::string& device_libs);

/// The toolchain: clang from $KFORGE_HIP_CLANG or clang-22 in PATH, the device
/// libraries from $KFORGE_HIP_DEVICE_LIBS or the build's. kUnsupported with
/// the reason when either is missing (the targets are then unavailable, never
/// an error). Looked up once per process.
const Result<OfflineHipToolchain>& offline_hip_toolchain();

/// "clang 22.1.8 (offline)": the compiler name recorded with its figures, never
/// to be mixed with hipRTC's; or why it is unavailable.
Result<std::string> offline_hip_version();

/// Compiles `source` for `arch` with clang -x hip --offload-arch=<arch>
/// --cuda-device-only -nogpuinc -include <hip_offline_header()> -O3
/// -std=c++17 (docs/compile-only.md) plus `options`, and reports resources
/// from the code object's metadata as hiprtc_compile does. kUnsupported
/// without the toolchain; kCompile with clang's output as context.
Result<HiprtcOutput> offline_hip_compile(const std::string& source, const std::string& kernel_name,
                                         const std::string& arch, const std::string& options);

}  // namespace kforge
