// swiglu: the SwiGLU gate Y = silu(gate) * up over a packed gate|up tensor.
//
// Problem dims: rows, cols. X is rows x (2 cols), packed row-major (row
// stride 2 cols), stored in the problem's dtype T (f32, f16 or bf16): the
// first cols elements of a row are the gate, the next cols the up
// projection, as a fused gate|up projection GEMM (its weight's columns
// [W_gate | W_up]) writes them. Y is rows x cols, f32. Per element:
//   Y[i][j] = silu(X[i][j]) * X[i][cols + j],   silu(a) = a / (1 + e^-a)
// Kernel arguments, in order:
//   int rows, int cols, global const T* X, global float* Y
// Y is written, never read (it may hold NaN on entry). No layout (only NN)
// and no attributes. Expression names: rows, cols, dtype_bytes.
//
// Special values: NaN in a gate or up element makes its output NaN; other
// elements are unaffected. Infinite inputs are outside the contract.
//
// flops: 4 per output (the exponential counted as one; negate, add, divide,
// multiply); bytes: X read once, Y written once. Tolerance:
// docs/tolerances.md (12u relative to |gate * up|).
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class SwigluOperator final : public Operator {
 public:
  std::string_view name() const override { return "swiglu"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  /// kPoisonedOutput: X uniform in (-1, 1), Y NaN. kAccumulate (there is no
  /// accumulating form): gates times 24, and every fifth gate below -90
  /// (where e^-a overflows f32); Y NaN.
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
