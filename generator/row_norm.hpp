// What layernorm and rmsnorm share: the rows x cols problem checks, the
// kernel arguments and workloads, the boundary rows of their second
// validation workload, and the f32 unit roundoff bound gamma(n) their
// tolerances use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generator/operator.hpp"
#include "generator/workload_builder.hpp"

namespace kforge {

/// The eps every row-norm workload passes (PyTorch's default).
inline constexpr float kRowNormEps = 1e-5f;

/// Checks a rows x cols problem of `op`: the op name (filled when empty), no
/// epilogue or unknown attribute, layout NN, no unknown dims, each dim
/// positive and a 32-bit int, and rows * cols * 4 bytes addressable.
Result<Problem> normalize_rows_cols(const Operator& op, Problem p);

/// A row norm's rows and cols (0 where missing or not positive).
struct RowsCols {
  std::size_t rows = 0, cols = 0;
};
RowsCols rows_cols_of(const Problem& p);

/// The kernel arguments of a row norm: rows, cols, eps, X (rows x cols, the
/// problem's dtype), one per-column vector per name in `column_vectors`
/// (W, then B for layernorm), then the f32 output Y.
std::vector<ArgumentSpec> row_norm_arguments(const Problem& p,
                                             const std::vector<std::string>& column_vectors);
/// The inputs of row_norm_arguments drawn from `seed` (X from stream 0, the
/// i-th column vector from stream 1 + i; the boundary rows of a kAccumulate
/// workload from stream 3) and Y poisoned with NaN.
Workload row_norm_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind,
                           const std::vector<std::string>& column_vectors);

/// How a row of the boundary workload is drawn: row i uses kind i % 5.
enum class BoundaryRow { kOffset, kConstant, kLarge, kTiny, kUniform };
BoundaryRow boundary_row_kind(std::size_t row);

/// Fills X (rows x cols, any dtype) with boundary rows: kOffset 64 + U(-1, 1),
/// kConstant one U(-8, 8) value repeated, kLarge U(-1, 1) * 2^14 (f16) or
/// * 2^40, kTiny +-(0.5 + |U|/2) * 2^-8, kUniform U(-1, 1). Values are
/// rounded to X's dtype; none is zero.
void fill_boundary_rows(HostTensor& x, std::size_t rows, std::size_t cols, SplitMix64 rng);

/// gamma(n) = n u / (1 - n u) for u = 2^-24 (f32), 1 when n u >= 1/2 (vacuous).
double gamma_f32(double n);

}  // namespace kforge
