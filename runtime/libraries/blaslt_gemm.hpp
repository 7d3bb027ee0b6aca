// cuBLASLt's and hipBLASLt's matmul as a library candidate of the gemm
// operator, one implementation for both: a configuration names one of the
// algorithms the library's heuristic offers for the problem, called on the
// device's stream with the buffers a kernel would get
// (docs/vendor-libraries.md, "cuBLASLt" and "hipBLASLt").
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"

namespace kforge {

/// The vendors' traits (cublaslt_traits.hpp, hipblaslt_traits.hpp).
struct CublasLt;
struct HipblasLt;

/// The ALGO value that passes no algorithm: the library chooses at each call.
inline constexpr int kBlasLtDefaultAlgo = 16;

/// Binds library `Lib`'s matmul for `problem` on `device` (a CUDA device for
/// cuBLASLt, a HIP one for hipBLASLt), C in f32 with f32 accumulation.
/// ALGO k < 16 is the k-th of the 16 algorithms its heuristic
/// (...MatmulAlgoGetHeuristic) is asked for, kUnsupported where it offers
/// fewer; ALGO 16 passes none. kforge's row-major C = op(A) op(B) is the
/// library's column-major C^T = op(B)^T op(A)^T (column_major_gemm.hpp): B
/// is passed as its A and A as its B. `stored`, a result's "library_call"
/// (LibraryKernel::call_identity), names the algorithm a tune chose: it is
/// bound again (Lib::replay) instead of asking the heuristic; where the
/// library refuses it, the heuristic's k-th is taken and the identity says why.
template <class Lib>
Result<std::unique_ptr<Kernel>> bind_blaslt_gemm(Device& device, const Problem& problem, const Config& config,
                                                 const std::string& name, const nlohmann::json& stored);

}  // namespace kforge
