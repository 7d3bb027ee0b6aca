// reduce: sum or max over the last axis of a rows x cols tensor, or over the
// whole tensor.
//
// Problem dims: rows, cols. Layout NN only. Attributes (Problem::attrs):
//   kind = sum | max   (KF_KIND 0 | 1, KF_KIND_SUM / KF_KIND_MAX)
//   axis = last | all  (KF_AXIS 0 | 1): last gives rows outputs, all gives one.
// Storage: X is rows x cols of T (f32, f16 or bf16), row-major; out is f32,
// rows elements (axis=last) or 1 (axis=all). With axis=all the kernel reduces
// the rows * cols elements as one row.
// Kernel arguments, in order:
//   int rows, int cols, global const T* X, global float* out,
//   global float* partials, global int* counters
// partials (kReduceMaxSplit floats per output) and counters (one int per
// output, zero on entry, left zero on exit) are scratch for templates that
// split a row over several work-groups: each group writes its partial, and the
// last to finish (an atomic ticket on the row's counter) combines them in
// group order, writes the output and resets the counter. A one-pass template
// ignores them. The operator sizes them from the problem (outputs() * 64 and
// outputs()).
// max propagates NaN (a row holding a NaN gives NaN); sum follows IEEE.
// Expression names: rows, cols, dtype_bytes, kind, axis, outputs (rows or 1),
// length (elements per output: cols or rows * cols).
// flops: rows * cols; bytes: X once, out once.
#pragma once

#include "generator/operator.hpp"

namespace kforge {

/// Work-groups a template may split one output's reduction into.
inline constexpr int kReduceMaxSplit = 64;

class ReduceOperator final : public Operator {
 public:
  std::string_view name() const override { return "reduce"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"rows", 1024}, {"cols", 1024}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override;
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
  std::vector<AttributeSpec> attributes() const override;
};

}  // namespace kforge
