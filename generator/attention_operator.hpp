// attention: O = softmax(scale * Q K^T + mask) V per batch and head (forward,
// no dropout), the scaled dot-product attention of transformers.
//
// Problem dims: B (batch), H (heads), S (queries), SK (keys; default S), D
// (head dimension). Storage is packed row-major, heads inside batches:
//   Q: B x H x S  x D     K, V: B x H x SK x D     O: B x H x S x D (f32)
// Q, K and V are stored in the problem's dtype T (f16, bf16 or f32);
// scores, softmax and the weighted sum are computed in f32.
// Attribute mask = none | causal (Problem::attrs; the generator defines
// KF_MASK 0 | 1 and KF_MASK_NONE or KF_MASK_CAUSAL 1). With causal, query i
// sees keys j <= i + (SK - S) (aligned at the bottom right, so a decode step
// S = 1 sees every key); causal needs SK >= S so that every query sees a key.
// Kernel arguments, in order:
//   int B, int H, int S, int SK, int D, float scale, global const T* Q,
//   global const T* K, global const T* V, global float* O
// The workload passes scale = 1 / sqrt(D). Per batch b, head h, query i:
//   s_j = scale * sum_d Q[b][h][i][d] K[b][h][j][d]   for visible j
//   O[b][h][i][d] = sum_j exp(s_j - max_j s_j) V[b][h][j][d] / sum_j exp(s_j - max_j s_j)
// O is written, never read (it may hold NaN on entry). Layout: NN only.
// Expression names: B, H, S, SK, D, dtype_bytes, mask (0 none, 1 causal).
//
// Special values: a NaN in Q row i, or in a K row that query i sees, makes
// output row i NaN; a NaN in V[j][d] makes column d NaN for every query that
// sees key j. Keys a query does not see (causal) never affect it, NaN or not.
// Infinities give NaN or Inf where they reach (not specified further).
//
// flops: 4 D per visible (query, key) pair (Q K^T and P V); bytes: Q, K and
// V read once, O written once. Tolerance (docs/tolerances.md): relative to
// the error a trusted f32 host implementation reaches on the same inputs.
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class AttentionOperator final : public Operator {
 public:
  /// Tolerance = max(kMargin * (worst error of the f32 host baseline / scale), kFloor).
  static constexpr double kMargin = 8.0;
  static constexpr double kFloor = 1.0 / (1 << 19);  ///< 32 u of f32

  std::string_view name() const override { return "attention"; }
  std::vector<std::string> dims() const override { return {"B", "H", "S", "SK", "D"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"B", 1}, {"H", 8}, {"S", 256}, {"D", 64}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes", "mask"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  /// kPoisonedOutput: Q, K, V uniform in (-1, 1), O NaN. kAccumulate (there is
  /// no accumulating form): the peaked workload, Q and K uniform in (-4, 4),
  /// so that scores reach 16 sqrt(D), beyond exp's f32 range unless the
  /// running maximum is subtracted; O NaN.
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  /// value: the double-precision answer; scale: sum_j P_ij |V_jd| (the
  /// magnitude the output is a weighted mean of); tolerance from the f32
  /// baseline (see kMargin). Cost: two passes of 4 B H S SK D operations.
  Reference reference(const Problem& p, const Workload& w) const override;
  std::vector<AttributeSpec> attributes() const override;
};

}  // namespace kforge
