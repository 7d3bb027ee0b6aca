// gemm: C = act(alpha * op(A) * op(B) + beta * C + bias), batched, row-major.
//
// Problem dims: M, N, K, batch (default 1). op(A) is M x K and op(B) is K x N.
// Storage is packed row-major, batches contiguous (strided batched GEMM):
//   A: NN/NT stores M x K (lda = K); TN/TT stores K x M (lda = M)
//   B: NN/TN stores K x N (ldb = N); NT/TT stores N x K (ldb = K)
//   C: M x N (ldc = N), f32.
// Inputs A and B are f32, f16 or bf16 (T); accumulation and C are f32.
// Kernel arguments, in order:
//   int M, int N, int K, float alpha, global const T* A, global const T* B,
//   float beta, global float* C, global const float* bias
// With beta == 0, C is not read (BLAS convention).
// Epilogue (Problem::epilogue; the generator defines KF_BIAS 0|1 and
// KF_ACTIVATION 0 none | 1 relu | 2 gelu | 3 silu, and the prelude's
// kf_activation applies the latter):
//   C[b][i][j] = act(alpha * sum_k op(A)[b][i][k] op(B)[b][k][j] + beta * C[b][i][j] + bias[j])
// bias has N floats, broadcast over rows and batches, and is read only when
// the epilogue has a bias; otherwise any buffer may be passed (it is not read).
// gelu is the erf form x/2 (1 + erf(x / sqrt 2)); silu is x / (1 + e^-x).
// Expression names: M, N, K, batch, trans_a, trans_b, dtype_bytes, bias (0|1),
// activation (0..3), so an envelope can refuse an epilogue ("activation == 0").
// flops: 2 M N K batch (the epilogue is not counted); bytes: A and B read
// once, C written once (beta = 0 assumed), bias read once when present.
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class GemmOperator final : public Operator {
 public:
  std::string_view name() const override { return "gemm"; }
  std::vector<std::string> dims() const override { return {"M", "N", "K", "batch"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"M", 256}, {"N", 256}, {"K", 256}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override;
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  /// The same seed for both validation runs: they share A and B (the
  /// accumulate run differs in C, alpha and beta), so the reference's
  /// O(MNK) products are computed once for both (references()).
  std::uint64_t workload_seed(std::uint64_t run_seed, WorkloadKind) const override { return run_seed; }
  std::string run_name(WorkloadKind kind) const override {
    return kind == WorkloadKind::kPoisonedOutput ? "poisoned-output run" : "accumulate run";
  }
  Reference reference(const Problem& p, const Workload& w) const override;
  /// Workloads with the same A and B share one pass over the products.
  std::vector<Reference> references(const Problem& p, const std::vector<const Workload*>& ws) const override;
  bool supports_epilogue() const override { return true; }
};

}  // namespace kforge
