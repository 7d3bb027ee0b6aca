// gemm: C = alpha * op(A) * op(B) + beta * C, batched, row-major.
//
// Problem dims: M, N, K, batch (default 1). op(A) is M x K and op(B) is K x N.
// Storage is packed row-major, batches contiguous:
//   A: NN/NT stores M x K (lda = K); TN/TT stores K x M (lda = M)
//   B: NN/TN stores K x N (ldb = N); NT/TT stores N x K (ldb = K)
//   C: M x N (ldc = N), f32.
// Kernel arguments, in order:
//   int M, int N, int K, float alpha, global const T* A, global const T* B,
//   float beta, global float* C
// with T the input dtype. With beta == 0, C is not read (BLAS convention).
// Expression names: M, N, K, batch, trans_a, trans_b, dtype_bytes.
#pragma once

#include "operator.hpp"

namespace kforge {

class GemmOperator final : public Operator {
 public:
  std::string_view name() const override { return "gemm"; }
  std::vector<std::string> dims() const override { return {"M", "N", "K", "batch"}; }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override;
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
};

}  // namespace kforge
