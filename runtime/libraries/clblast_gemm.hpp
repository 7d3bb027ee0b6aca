// CLBlast's GEMM as a library candidate of the gemm operator: the call form
// a configuration names (BATCHED 0: CLBlastSgemm, 1: CLBlastSgemmStridedBatched),
// made on the OpenCL device's queue with the buffers a kernel would get.
#pragma once

#include <memory>
#include <string>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// Binds the call for `problem`'s layout on `device` (an OpenCL device) and
/// makes one small call first, in which CLBlast builds its programs for the
/// device: the candidate's compile. `name` is the kernel name the instance
/// carries. KFORGE_FAULT_CLBLAST_SWAP_TRANSPOSE set plants a wrong call (A's
/// transpose flag inverted), which validation must catch.
Result<std::unique_ptr<Kernel>> bind_clblast_gemm(Device& device, const Problem& problem,
                                                  const Config& config, const std::string& name);

}  // namespace kforge
