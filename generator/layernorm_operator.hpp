// layernorm: Y = (X - mean(X)) / sqrt(var(X) + eps) * W + B over the last axis.
//
// Problem dims: rows, cols. X is rows x cols, packed row-major (row stride
// cols); W (weight) and B (bias) have cols elements and are broadcast over
// rows. X, W and B are stored in the problem's dtype T (f32, f16 or bf16),
// every statistic is computed in f32, and Y is rows x cols f32. Per row i:
//   mean_i = sum_j X[i][j] / cols
//   var_i  = sum_j (X[i][j] - mean_i)^2 / cols            (biased, as PyTorch)
//   Y[i][j] = (X[i][j] - mean_i) / sqrt(var_i + eps) * W[j] + B[j]
// Kernel arguments, in order:
//   int rows, int cols, float eps, global const T* X, global const T* W,
//   global const T* B, global float* Y
// Y is written, never read (it may hold NaN on entry). No layout (only NN)
// and no attributes. Expression names: rows, cols, dtype_bytes.
//
// Special values: a row holding NaN or +-Inf gives a row of NaN (Inf - Inf
// in the deviations); other rows are unaffected. A constant row (variance 0)
// gives Y = B up to rounding in the mean (never NaN: eps > 0 is required).
// The contract holds while sum_j X[i][j]^2 stays below FLT_MAX (about 3.4e38).
//
// flops: 8 per element (mean: 1; variance: 3; output: 4); bytes: X, W and B
// read once, Y written once. Tolerance: docs/tolerances.md (gamma(cols + 16)
// in f32 against a componentwise scale that carries the cancellation in the
// variance).
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class LayernormOperator final : public Operator {
 public:
  std::string_view name() const override { return "layernorm"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  /// kPoisonedOutput: X, W, B uniform in (-1, 1), Y NaN. kAccumulate (there is
  /// no accumulating form): the boundary workload, rows cycling through mean
  /// offset 64 (cancellation in the variance), constant rows (variance 0),
  /// large magnitudes (2^14 in f16, 2^40 otherwise), tiny magnitudes (variance
  /// near eps) and plain uniform rows; Y NaN.
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
