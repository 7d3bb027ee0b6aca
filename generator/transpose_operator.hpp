// transpose: Y[b][j][i] = X[b][i][j], the 2-D transpose (batch = 1) and the
// batched permutation of the last two axes.
//
// Problem dims: rows, cols, batch (default 1). Layout NN only.
// Storage: X is batch x rows x cols of T (f32, f16 or bf16), row-major,
// batches contiguous; Y is batch x cols x rows, f32 (inputs widen exactly).
// Kernel arguments, in order:
//   int rows, int cols, global const T* X, global float* Y
// Batch is the grid's z (templates launch batch blocks along z).
// Expression names: rows, cols, batch, dtype_bytes.
// flops: 0; bytes: X read once, Y written once.
// Tolerance: exact (a widening copy); NaN and infinities are copied.
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class TransposeOperator final : public Operator {
 public:
  std::string_view name() const override { return "transpose"; }
  std::vector<std::string> dims() const override { return {"rows", "cols", "batch"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem&) const override { return 0.0; }
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
