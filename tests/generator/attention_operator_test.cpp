// The attention operator: problem checks, the mask attribute, cost model,
// workloads (plain and peaked), the reference on hand-computed cases, the
// baseline-relative tolerance and NaN propagation.
#include "generator/attention_operator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "generator/workload_builder.hpp"
#include "tests/test_util.hpp"

using kforge::AttentionOperator;
using kforge::Dtype;
using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const AttentionOperator kAttention;

Problem problem(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t sk, std::int64_t d,
                bool causal = false, Dtype dtype = Dtype::kF32) {
  Problem p;
  p.op = "attention";
  p.dims = {{"B", b}, {"H", h}, {"S", s}, {"SK", sk}, {"D", d}};
  p.attrs["mask"] = causal ? "causal" : "none";
  p.dtype = dtype;
  return p;
}

std::string normalize_error(Problem p) {
  auto r = kAttention.normalize(std::move(p));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kforge::ErrorCode::kBadInput);
  return r.error().message;
}

void set_f32(Workload& w, const char* name, const std::vector<float>& values) {
  auto& t = w.tensors[kforge::tensor_named(w, name)];
  REQUIRE(t.elements() == values.size());
  std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
}

}  // namespace

TEST_CASE("attention: normalize fills SK and the mask, and checks dims", "[attention]") {
  Problem p;
  p.dims = {{"B", 2}, {"H", 3}, {"S", 5}, {"D", 64}};
  auto n = kAttention.normalize(p);
  REQUIRE(n.ok());
  CHECK(n->op == "attention");
  CHECK(n->dim("SK") == 5);
  CHECK(n->attr("mask") == "none");
  CHECK(n->key() == "attention/B=2,D=64,H=3,S=5,SK=5/f32/NN/mask=none");
  CHECK(kAttention.normalize(problem(1, 1, 1, 4096, 128, true)).ok());  // decode step

  p = problem(1, 1, 8, 4, 64, true);
  CHECK_THAT(normalize_error(p), Catch::StartsWith("attention: mask=causal needs SK >= S (got S=8, SK=4)"));
  CHECK(kAttention.normalize(problem(1, 1, 8, 4, 64, false)).ok());
  p = problem(1, 1, 8, 8, 64);
  p.attrs["mask"] = "window";
  CHECK(normalize_error(p) == "attention: attribute mask = 'window' is not one of none, causal");
  p = problem(1, 1, 8, 8, 64);
  p.attrs["kind"] = "max";
  CHECK(normalize_error(p) == "attention: unknown attribute 'kind' (attention reads mask)");
  p = problem(1, 1, 8, 8, 64);
  p.dims["M"] = 3;
  CHECK(normalize_error(p) == "attention: unknown dimension 'M' (attention reads B, H, S, SK, D)");
  p = problem(1, 1, 8, 8, 64);
  p.dims.erase("D");
  CHECK(normalize_error(p) == "attention: dimension D is missing");
  p = problem(1, 0, 8, 8, 64);
  CHECK(normalize_error(p) == "attention: dimension H must be positive, got 0");
  p = problem(1 << 20, 1 << 12, 8, 8, 64);
  CHECK_THAT(normalize_error(p), Catch::EndsWith("does not fit a 32-bit grid dimension"));
  p = problem(1 << 15, 1 << 15, 8, (std::int64_t{1} << 31) - 1, (std::int64_t{1} << 31) - 1);
  CHECK_THAT(normalize_error(p), Catch::EndsWith("is too large to address"));
  p = problem(1, 1, 8, 8, 64);
  p.layout = *kforge::parse_layout("TN");
  CHECK_THAT(normalize_error(p), Catch::StartsWith("attention: layout TN is not supported"));
  p = problem(1, 1, 8, 8, 64);
  p.epilogue.bias = true;
  CHECK_THAT(normalize_error(p), Catch::StartsWith("attention: epilogue 'bias' is not supported"));
}

TEST_CASE("attention: names, flops and bytes", "[attention]") {
  Problem p = problem(2, 3, 4, 6, 8, false, Dtype::kF16);
  kforge::Env env;
  kAttention.add_to(env, p);
  CHECK(env == kforge::Env{{"B", 2}, {"H", 3}, {"S", 4}, {"SK", 6}, {"D", 8}, {"dtype_bytes", 2}, {"mask", 0}});
  CHECK(kAttention.flops(p) == 4.0 * 8 * 6 * 4 * 6);                    // every pair
  CHECK(kAttention.bytes(p) == 6.0 * 8 * (4 * (2 + 4) + 2 * 6 * 2));
  p.attrs["mask"] = "causal";
  kAttention.add_to(env, p);
  CHECK(env["mask"] == 1);
  // Query i sees keys j <= i + 2: 3 + 4 + 5 + 6 = 18 pairs.
  CHECK(kAttention.flops(p) == 4.0 * 8 * 6 * 18);
}

TEST_CASE("attention: reference on a hand-computed head", "[attention]") {
  // D = 1, two keys: scores scale * q * k; with scale = 1 set by hand.
  for (bool causal : {false, true}) {
    Problem p = problem(1, 1, 2, 2, 1, causal);
    Workload w = kAttention.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
    set_f32(w, "Q", {1, 2});
    set_f32(w, "K", {0.5f, -0.5f});
    set_f32(w, "V", {3, -1});
    for (auto& a : w.args) {
      if (a.name == "scale") a.f32 = 1.0f;
    }
    auto ref = kAttention.reference(p, w);
    // Query 1 sees both keys: scores 1, -1.
    const double e = std::exp(-2.0);
    CHECK(ref.value[1] == Approx((3 - e) / (1 + e)).epsilon(1e-14));
    CHECK(ref.scale[1] == Approx((3 + e) / (1 + e)).epsilon(1e-14));
    if (causal) {
      CHECK(ref.value[0] == 3.0);  // query 0 sees key 0 only
      CHECK(ref.scale[0] == 3.0);
    } else {
      const double e0 = std::exp(-1.0);  // scores 0.5, -0.5
      CHECK(ref.value[0] == Approx((3 - e0) / (1 + e0)).epsilon(1e-14));
    }
    CHECK(ref.tolerance >= AttentionOperator::kFloor);
  }
}

TEST_CASE("attention: the tolerance follows the f32 baseline's error", "[attention]") {
  // Uniform inputs: the baseline's weighted means err by a few u of sum P|V|,
  // so the floor holds. Peaked inputs: score errors grow with |s| and the
  // tolerance with them, to a few hundred u.
  Problem p = problem(1, 2, 33, 65, 64);
  auto plain = kAttention.reference(p, kAttention.make_workload(p, 3, WorkloadKind::kPoisonedOutput));
  CHECK(plain.tolerance == AttentionOperator::kFloor);
  auto peaked = kAttention.reference(p, kAttention.make_workload(p, 3, WorkloadKind::kAccumulate));
  CHECK(peaked.tolerance > 4 * AttentionOperator::kFloor);
  CHECK(peaked.tolerance < 1e-4);
  // S = SK = 1: the output is V exactly.
  Problem one = problem(2, 1, 1, 1, 8);
  Workload w1 = kAttention.make_workload(one, 3, WorkloadKind::kAccumulate);
  auto r1 = kAttention.reference(one, w1);
  CHECK(r1.tolerance == AttentionOperator::kFloor);
  for (std::size_t i = 0; i < r1.value.size(); ++i) CHECK(r1.value[i] == kforge::load_element(w1.tensors[2], i));
}

TEST_CASE("attention: NaN propagates to the outputs that see it", "[attention]") {
  Problem p = problem(1, 1, 4, 4, 2, true);
  Workload w = kAttention.make_workload(p, 5, WorkloadKind::kPoisonedOutput);
  w.tensors[2].f32()[2 * 2 + 1] = std::nanf("");  // V[key 2][d 1]
  auto ref = kAttention.reference(p, w);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(std::isfinite(ref.value[i * 2]));                // column 0 never
    CHECK(std::isnan(ref.value[i * 2 + 1]) == (i >= 2));   // column 1 from query 2 on
  }
  w = kAttention.make_workload(p, 5, WorkloadKind::kPoisonedOutput);
  w.tensors[1].f32()[3 * 2] = std::nanf("");  // K[key 3]: only the last query sees it
  ref = kAttention.reference(p, w);
  for (std::size_t i = 0; i < 8; ++i) CHECK(std::isnan(ref.value[i]) == (i >= 6));
}

TEST_CASE("attention: workloads are deterministic and follow the contract", "[attention]") {
  for (Dtype d : {Dtype::kF16, Dtype::kBF16, Dtype::kF32}) {
    Problem p = problem(2, 3, 5, 7, 16, false, d);
    Workload a = kAttention.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
    Workload b = kAttention.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
    Workload peaked = kAttention.make_workload(p, 42, WorkloadKind::kAccumulate);
    REQUIRE(a.tensors.size() == 4);
    CHECK(a.output == 3);
    for (std::size_t t = 0; t < 4; ++t) CHECK(a.tensors[t].bytes == b.tensors[t].bytes);
    CHECK(a.tensors[0].elements() == 2 * 3 * 5 * 16);
    CHECK(a.tensors[1].elements() == 2 * 3 * 7 * 16);
    CHECK(a.tensors[2].elements() == 2 * 3 * 7 * 16);
    CHECK(a.tensors[3].elements() == 2 * 3 * 5 * 16);
    CHECK(a.tensors[3].dtype == Dtype::kF32);
    CHECK(a.tensors[0].dtype == d);
    for (std::size_t i = 0; i < a.tensors[3].elements(); ++i) REQUIRE(std::isnan(a.tensors[3].f32()[i]));
    for (std::size_t t = 0; t < 3; ++t) {
      for (std::size_t i = 0; i < a.tensors[t].elements(); ++i) {
        const float v = kforge::load_element(a.tensors[t], i);
        REQUIRE(v != 0.0f);
        REQUIRE(std::fabs(v) <= 1.0f);
        // The peaked run scales Q and K by 4 (exact), keeps V.
        REQUIRE(kforge::load_element(peaked.tensors[t], i) == (t < 2 ? 4.0f * v : v));
      }
    }
    const std::vector<std::string> names{"B", "H", "S", "SK", "D", "scale", "Q", "K", "V", "O"};
    REQUIRE(a.args.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) CHECK(a.args[i].name == names[i]);
    CHECK(a.args[3].i32 == 7);
    CHECK(a.args[5].f32 == 0.25f);
    auto ref = kAttention.reference(p, peaked);
    for (double v : ref.value) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("attention: the reference is the same on one thread and on every core, every row computed",
          "[attention]") {
  // Large enough to run in parallel (B*H*S*SK*D >= 2^22), S not a multiple
  // of the 64-row blocks, causal, and the peaked workload, whose tolerance
  // comes from the largest baseline error over all rows.
  Problem p = problem(1, 2, 130, 130, 128, true);
  auto normalized = kAttention.normalize(p);
  REQUIRE(normalized.ok());
  p = *normalized;
  const Workload w = kAttention.make_workload(p, 5, WorkloadKind::kAccumulate);
  kforge::Reference one, all;
  {
    const kforge::test::ScopedEnv threads("KFORGE_HOST_THREADS", "1");
    one = kAttention.reference(p, w);
  }
  {
    const kforge::test::ScopedEnv threads("KFORGE_HOST_THREADS", "4");
    all = kAttention.reference(p, w);
  }
  REQUIRE(one.value.size() == 2u * 130 * 128);
  std::size_t unset = 0;
  for (double v : one.value) unset += std::isnan(v);
  CHECK(unset == 0);
  CHECK(one.value == all.value);
  CHECK(one.scale == all.scale);
  CHECK(one.tolerance == all.tolerance);
  CHECK(one.tolerance > AttentionOperator::kFloor);
}
