// The header the offline HIP compiler (clang -nogpuinc) includes before every
// instance, standing in for the one hipRTC includes implicitly.
#pragma once

#include <string_view>

namespace kforge {

/// Qualifiers (__global__, __shared__, __launch_bounds__), threadIdx /
/// blockIdx / blockDim / gridDim, __syncthreads, __threadfence, atomicAdd,
/// __shfl_xor, int and float min / max and the float math functions kforge's
/// preludes and templates use, over clang's amdgcn builtins and the ROCm
/// device libraries (ocml, ockl).
std::string_view hip_offline_header();

}  // namespace kforge
