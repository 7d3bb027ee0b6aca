// rope: rotary position embedding over a [tokens, heads, head_dim] tensor.
//
// Problem dims: tokens, heads, head_dim (even). X is tokens x heads x
// head_dim, packed row-major (a Q or K projection's output viewed per head),
// stored in the problem's dtype T (f32, f16 or bf16); Y has X's shape, f32.
// Token t sits at position p = pos0 + t, so a prefill passes pos0 = 0 and a
// decode step at position p passes pos0 = p with tokens = 1. With
// D = head_dim and i in [0, D/2):
//   inv_freq_i = theta^(-2i / D),  angle = p * inv_freq_i
//   (y_a, y_b) = (x_a cos(angle) - x_b sin(angle), x_b cos(angle) + x_a sin(angle))
// where the pair (a, b) is, per attribute `pairing`:
//   half (default): (i, i + D/2), the rotate-half layout of Hugging Face
//     Llama and GPT-NeoX checkpoints;
//   interleaved: (2i, 2i + 1), the layout of the original Llama and GPT-J.
// The generator defines KF_PAIRING (0 half, 1 interleaved) and
// KF_PAIRING_HALF or KF_PAIRING_INTERLEAVED.
// Kernel arguments, in order:
//   int tokens, int heads, int head_dim, int pos0, float theta,
//   global const T* X, global float* Y
// pos0 and theta are free scalars (the workloads pass pos0 = 0, theta =
// 10000, then pos0 = 4093, theta = 500000). Y is written, never read, and
// must not alias X. Positions must stay below 2^24 (exact in f32).
// Expression names: tokens, heads, head_dim, dtype_bytes, pairing.
//
// Special values: NaN in an element makes both elements of its pair NaN;
// other pairs are unaffected.
//
// flops: 3 per element (per pair: four products and two sums; the angle and
// its sine and cosine are not counted); bytes: X read once, Y written once.
// Tolerance: docs/tolerances.md (2u relative to (|x_a| + |x_b|) times a
// factor that grows with the angle, which the device computes in f32).
#pragma once

#include "generator/operator.hpp"

namespace kforge {

class RopeOperator final : public Operator {
 public:
  std::string_view name() const override { return "rope"; }
  std::vector<std::string> dims() const override { return {"tokens", "heads", "head_dim"}; }
  std::map<std::string, std::int64_t> default_dims() const override {
    return {{"tokens", 256}, {"heads", 8}, {"head_dim", 128}};
  }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override { return {"dtype_bytes", "pairing"}; }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  /// kPoisonedOutput: X uniform in (-1, 1), pos0 0, theta 10000, Y NaN.
  /// kAccumulate (there is no accumulating form): a late decode-like
  /// position, pos0 4093 and theta 500000 (Llama 3), X times 2^8; Y NaN.
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
  std::vector<AttributeSpec> attributes() const override;
};

}  // namespace kforge
