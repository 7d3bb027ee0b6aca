// cuBLASLt's matmul as a library candidate of the gemm operator: a
// configuration names one of the algorithms cuBLASLt's heuristic offers for
// the problem, called on the CUDA device's stream with the buffers a kernel
// would get (docs/vendor-libraries.md, "cuBLASLt").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// The ALGO value that passes no algorithm: cuBLASLt chooses at each call.
inline constexpr int kCublasLtDefaultAlgo = 16;

/// Binds cuBLASLt's matmul for `problem` on `device` (a CUDA device).
/// ALGO k < 16 is the k-th of the 16 algorithms cublasLtMatmulAlgoGetHeuristic
/// is asked for (kUnsupported where it offers fewer); ALGO 16 passes none.
/// kforge's row-major C = op(A) op(B) is cuBLASLt's column-major
/// C^T = op(B)^T op(A)^T: B is passed as cuBLASLt's A and A as its B.
/// `stored`, a result's "library_call" (LibraryKernel::call_identity), names
/// the algorithm a tune chose: it is rebuilt from its fields
/// (cublasLtMatmulAlgoInit, ConfigSetAttribute) and checked
/// (cublasLtMatmulAlgoCheck) instead of asking the heuristic; where the
/// check refuses it, the heuristic's k-th is taken and the identity says why.
Result<std::unique_ptr<Kernel>> bind_cublaslt_gemm(Device& device, const Problem& problem,
                                                   const Config& config, const std::string& name,
                                                   const nlohmann::json& stored);

}  // namespace kforge
