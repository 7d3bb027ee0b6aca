// hipBLASLt's matmul as a library candidate of the gemm operator: a
// configuration names one of the algorithms hipBLASLt's heuristic offers for
// the problem, called on the HIP device's stream with the buffers a kernel
// would get (docs/vendor-libraries.md, "hipBLASLt").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// Binds hipBLASLt's matmul for `problem` on `device` (a HIP device):
/// ALGO k < 16 is the k-th of the 16 algorithms hipblasLtMatmulAlgoGetHeuristic
/// is asked for, ALGO 16 passes none (hipBLASLt chooses at each call); the
/// row-major problem is the column-major transposed one (column_major_gemm.hpp).
/// `stored`, a result's "library_call", holds the algorithm's bytes, which
/// hipBLASLt lets a program keep for the same library version (the template
/// hash covers it): they are bound again instead of asking the heuristic.
Result<std::unique_ptr<Kernel>> bind_hipblaslt_gemm(Device& device, const Problem& problem,
                                                    const Config& config, const std::string& name,
                                                    const nlohmann::json& stored);

}  // namespace kforge
