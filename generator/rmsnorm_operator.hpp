// rmsnorm: Y = X / sqrt(mean(X^2) + eps) * W over the last axis.
//
// Problem dims: rows, cols. X is rows x cols, packed row-major (row stride
// cols); W (weight) has cols elements, broadcast over rows. X and W are
// stored in the problem's dtype T (f32, f16 or bf16), the statistic is
// computed in f32, and Y is rows x cols f32. Per row i:
//   ms_i    = sum_j X[i][j]^2 / cols
//   Y[i][j] = X[i][j] / sqrt(ms_i + eps) * W[j]
// Kernel arguments, in order:
//   int rows, int cols, float eps, global const T* X, global const T* W,
//   global float* Y
// Y is written, never read (it may hold NaN on entry). No layout (only NN)
// and no attributes. Expression names: rows, cols, dtype_bytes.
//
// Special values: a row holding NaN gives a row of NaN; other rows are
// unaffected. (An infinite element makes ms_i infinite: the other elements of
// its row become +-0 and the infinite one NaN, as in the double reference.)
// The contract holds while sum_j X[i][j]^2 stays below FLT_MAX (about 3.4e38).
//
// flops: 4 per element (square and add; two products); bytes: X and W read
// once, Y written once. Tolerance: docs/tolerances.md (gamma(cols + 16) in f32
// relative to |X[i][j] W[j]| / sqrt(ms_i + eps)).
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class RmsnormOperator final : public Operator {
 public:
  std::string_view name() const override { return "rmsnorm"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  /// kPoisonedOutput: X, W uniform in (-1, 1), Y NaN. kAccumulate (there is no
  /// accumulating form): the boundary rows of layernorm (offset, constant,
  /// large, tiny, uniform; generator/row_norm.hpp); Y NaN.
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
