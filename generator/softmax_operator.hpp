// softmax: Y[i][j] = exp(X[i][j] - m_i) / sum_k exp(X[i][k] - m_i), m_i = max_k X[i][k],
// row-wise over a rows x cols tensor (numerically stable: max-subtracted).
//
// Problem dims: rows, cols. Layout NN only. X is rows x cols of T (f32, f16,
// bf16); Y is rows x cols, f32.
// Kernel arguments, in order:
//   int rows, int cols, global const T* X, global float* Y,
//   global float* partials, global int* counters
// partials (2 * kSoftmaxMaxSplit floats per row) and counters (one int per
// row, zero on entry, left zero on exit) are scratch for templates that split
// a row over several work-groups (last-block-done); others ignore them.
// Special values: a row holding a NaN or +Inf, or only -Inf, gives NaN in the
// whole row; -Inf elements of other rows give 0.
// Expression names: rows, cols, dtype_bytes.
// flops: 5 rows cols (max, subtract, exp, sum, divide); bytes: X once, Y once.
#pragma once

#include "generator/operator.hpp"

namespace kforge {

inline constexpr int kSoftmaxMaxSplit = 64;

class SoftmaxOperator final : public Operator {
 public:
  std::string_view name() const override { return "softmax"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
