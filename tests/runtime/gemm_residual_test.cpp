// The fused residual add of a transformer's output and down projections:
// gemm with beta = 1 and C holding the f32 residual stream computes
// C = residual + A op(B) in one pass (C read once, written once). On PoCL,
// gemm_simt_tiled against GemmOperator's double reference, decode-like
// (M = 1) and prefill-like shapes, every input dtype; a reference without the
// residual must fail.
#include <catch2/catch.hpp>

#include "generator/gemm_operator.hpp"
#include "generator/workload_builder.hpp"
#include "tests/runtime/coverage_runner.hpp"

using namespace kforge;

namespace {

const GemmOperator kOp;

Problem problem(std::int64_t m, std::int64_t n, std::int64_t k, Dtype dtype) {
  return *kOp.normalize(Problem{"gemm", {{"M", m}, {"N", n}, {"K", k}}, dtype, {}, {}, {}});
}

/// The accumulate workload turned into a residual add: alpha 1, beta 1, C the
/// residual (random, as the workload drew it).
void as_residual(Workload& w) {
  for (auto& a : w.args) {
    if (a.name == "alpha" || a.name == "beta") a.f32 = 1.0f;
  }
}

}  // namespace

TEST_CASE("gemm with beta = 1 is a fused residual add", "[opencl][gemm][residual]") {
  const std::string config =
      test::builtin_template("gemm_simt_tiled").manifest.default_config().canonical_name();
  test::CoverageRunner runner("gemm_simt_tiled", config);
  for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
    for (const Problem& p : {problem(1, 257, 96, d), problem(37, 64, 130, d)}) {
      INFO(p.key());
      CHECK(runner.run(p, WorkloadKind::kAccumulate, 11, as_residual) == "");
      const std::vector<float> out = runner.last_output();
      Workload w = kOp.make_workload(p, 11, WorkloadKind::kAccumulate);
      as_residual(w);
      const Reference with = kOp.reference(p, w);
      CHECK(validate_output(out.data(), out.size(), with).passed);
      for (auto& a : w.args)
        if (a.name == "beta") a.f32 = 0.0f;  // the projection alone
      CHECK_FALSE(validate_output(out.data(), out.size(), kOp.reference(p, w)).passed);
    }
  }
}
