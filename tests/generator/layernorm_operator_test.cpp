// The layernorm and rmsnorm operators: problem checks, cost model, workloads
// (plain and boundary), references on hand-computed rows, tolerance, NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "generator/layernorm_operator.hpp"
#include "generator/rmsnorm_operator.hpp"
#include "generator/row_norm.hpp"

using kforge::Dtype;
using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const kforge::LayernormOperator kLayernorm;
const kforge::RmsnormOperator kRmsnorm;

Problem problem(const char* op, std::int64_t rows, std::int64_t cols, Dtype dtype = Dtype::kF32) {
  Problem p;
  p.op = op;
  p.dims = {{"rows", rows}, {"cols", cols}};
  p.dtype = dtype;
  return p;
}

std::string normalize_error(const kforge::Operator& op, Problem p) {
  auto r = op.normalize(std::move(p));
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

TEST_CASE("layernorm, rmsnorm: normalize checks dims, layout and attributes", "[layernorm][rmsnorm]") {
  for (const kforge::Operator* op : {static_cast<const kforge::Operator*>(&kLayernorm),
                                     static_cast<const kforge::Operator*>(&kRmsnorm)}) {
    const std::string who(op->name());
    INFO(who);
    Problem p = problem("", 3, 5);
    auto n = op->normalize(p);
    REQUIRE(n.ok());
    CHECK(n->op == who);
    CHECK(n->key() == who + "/cols=5,rows=3/f32/NN");

    p = problem(who.c_str(), 3, 5);
    p.dims.erase("cols");
    CHECK(normalize_error(*op, p) == who + ": dimension cols is missing");
    p = problem(who.c_str(), 0, 5);
    CHECK(normalize_error(*op, p) == who + ": dimension rows must be positive, got 0");
    p = problem(who.c_str(), 3, 5);
    p.dims["K"] = 2;
    CHECK(normalize_error(*op, p) == who + ": unknown dimension 'K' (" + who + " reads rows, cols)");
    p = problem(who.c_str(), 3, std::int64_t{1} << 31);
    CHECK_THAT(normalize_error(*op, p), Catch::StartsWith(who + ": dimension cols = 2147483648 does not fit"));
    p = problem(who.c_str(), (std::int64_t{1} << 31) - 1, (std::int64_t{1} << 31) - 1);
    CHECK_THAT(normalize_error(*op, p), Catch::EndsWith("is too large to address"));
    p = problem(who.c_str(), 3, 5);
    p.layout = *kforge::parse_layout("NT");
    CHECK_THAT(normalize_error(*op, p), Catch::StartsWith(who + ": layout NT is not supported"));
    p = problem(who.c_str(), 3, 5);
    p.attrs["mask"] = "causal";
    CHECK(normalize_error(*op, p) == who + ": unknown attribute 'mask' (" + who + " has none)");
    p = problem(who.c_str(), 3, 5);
    p.epilogue.bias = true;
    CHECK_THAT(normalize_error(*op, p), Catch::StartsWith(who + ": epilogue 'bias' is not supported"));
    p = problem("gemm", 3, 5);
    CHECK(normalize_error(*op, p) == who + ": problem is for operator 'gemm'");
  }
}

TEST_CASE("layernorm, rmsnorm: names, flops and bytes", "[layernorm][rmsnorm]") {
  Problem p = problem("layernorm", 4, 6, Dtype::kF16);
  kforge::Env env;
  kLayernorm.add_to(env, p);
  CHECK(env == kforge::Env{{"rows", 4}, {"cols", 6}, {"dtype_bytes", 2}});
  CHECK(kLayernorm.flops(p) == 8.0 * 24);
  CHECK(kLayernorm.bytes(p) == 24.0 * (2 + 4) + 2.0 * 6 * 2);
  p.op = "rmsnorm";
  CHECK(kRmsnorm.flops(p) == 4.0 * 24);
  CHECK(kRmsnorm.bytes(p) == 24.0 * (2 + 4) + 6.0 * 2);
}

TEST_CASE("layernorm: reference on a hand-computed row", "[layernorm]") {
  Problem p = problem("layernorm", 2, 4);
  Workload w = kLayernorm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  // Row 0: mean 2.5, variance 1.25; row 1 is constant (variance 0).
  set_f32(w, "X", {1, 2, 3, 4, 7, 7, 7, 7});
  set_f32(w, "W", {1, -1, 2, 0.5f});
  set_f32(w, "B", {0, 1, -1, 0.25f});
  const double eps = kforge::kRowNormEps;
  auto ref = kLayernorm.reference(p, w);
  const double r = 1.0 / std::sqrt(1.25 + eps);
  const std::vector<double> want{-1.5 * r, 0.5 * r + 1, 1.0 * r - 1, 0.75 * r + 0.25, 0, 1, -1, 0.25};
  for (std::size_t i = 0; i < 8; ++i) CHECK(ref.value[i] == Approx(want[i]).epsilon(1e-14));
  // Scale: |w| r (a + |x - mean| (1 + g a^2 / (var + eps))) + |b|, a = mean |x|.
  const double g = kforge::gamma_f32(4 + 16);
  CHECK(ref.tolerance == g);
  CHECK(ref.scale[0] == Approx(r * (2.5 + 1.5 * (1 + g * 6.25 / (1.25 + eps)))).epsilon(1e-14));
  // The constant row: only the mean's rounding can move it, amplified by 1/sqrt(eps).
  CHECK(ref.scale[4] == Approx(7.0 / std::sqrt(eps)).epsilon(1e-12));
  CHECK(ref.scale[5] == Approx(7.0 / std::sqrt(eps) + 1).epsilon(1e-12));
}

TEST_CASE("layernorm, rmsnorm: NaN and Inf follow the contract in the reference", "[layernorm][rmsnorm]") {
  Problem p = problem("layernorm", 3, 4);
  Workload w = kLayernorm.make_workload(p, 2, WorkloadKind::kPoisonedOutput);
  auto& x = w.tensors[0];
  x.f32()[1] = std::nanf("");
  x.f32()[6] = INFINITY;
  auto ref = kLayernorm.reference(p, w);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(std::isnan(ref.value[j]));      // row 0 holds a NaN
    CHECK(std::isnan(ref.value[4 + j]));  // row 1 holds an Inf
    CHECK(std::isfinite(ref.value[8 + j]));
  }
  p.op = "rmsnorm";
  Workload wr = kRmsnorm.make_workload(p, 2, WorkloadKind::kPoisonedOutput);
  wr.tensors[0].f32()[1] = std::nanf("");
  wr.tensors[0].f32()[6] = INFINITY;
  auto rr = kRmsnorm.reference(p, wr);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(std::isnan(rr.value[j]));
    CHECK(std::isfinite(rr.value[8 + j]));
    if (j != 2) CHECK(rr.value[4 + j] == 0.0);  // the Inf's row: +-0 but the Inf itself
  }
  CHECK(std::isnan(rr.value[6]));
}

TEST_CASE("layernorm, rmsnorm: workloads are deterministic, never zero, and follow the contract",
          "[layernorm][rmsnorm]") {
  for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
    Problem p = problem("layernorm", 5, 7, d);
    Workload a = kLayernorm.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
    Workload b = kLayernorm.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
    Workload other = kLayernorm.make_workload(p, 43, WorkloadKind::kPoisonedOutput);
    REQUIRE(a.tensors.size() == 4);
    CHECK(a.output == 3);
    for (std::size_t t = 0; t < 4; ++t) CHECK(a.tensors[t].bytes == b.tensors[t].bytes);
    CHECK(a.tensors[0].bytes != other.tensors[0].bytes);
    CHECK(a.tensors[0].dtype == d);
    CHECK(a.tensors[1].elements() == 7);
    CHECK(a.tensors[2].elements() == 7);
    CHECK(a.tensors[3].dtype == Dtype::kF32);
    CHECK(a.tensors[3].is_output);
    for (std::size_t i = 0; i < 35; ++i) REQUIRE(std::isnan(a.tensors[3].f32()[i]));
    for (std::size_t t = 0; t < 3; ++t) {
      for (std::size_t i = 0; i < a.tensors[t].elements(); ++i) REQUIRE(kforge::load_element(a.tensors[t], i) != 0.0f);
    }
    const std::vector<std::string> names{"rows", "cols", "eps", "X", "W", "B", "Y"};
    REQUIRE(a.args.size() == names.size());
    for (std::size_t i = 0; i < names.size(); ++i) CHECK(a.args[i].name == names[i]);
    CHECK(a.args[0].i32 == 5);
    CHECK(a.args[1].i32 == 7);
    CHECK(a.args[2].f32 == kforge::kRowNormEps);

    p.op = "rmsnorm";
    Workload r = kRmsnorm.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
    REQUIRE(r.tensors.size() == 3);
    CHECK(r.output == 2);
    CHECK(r.tensors[0].bytes == a.tensors[0].bytes);
    const std::vector<std::string> rnames{"rows", "cols", "eps", "X", "W", "Y"};
    REQUIRE(r.args.size() == rnames.size());
    for (std::size_t i = 0; i < rnames.size(); ++i) CHECK(r.args[i].name == rnames[i]);
  }
}

TEST_CASE("layernorm: the boundary workload draws its row kinds and the reference stays finite",
          "[layernorm][rmsnorm]") {
  for (Dtype d : {Dtype::kF32, Dtype::kF16, Dtype::kBF16}) {
    INFO(kforge::dtype_name(d));
    Problem p = problem("layernorm", 10, 33, d);
    Workload w = kLayernorm.make_workload(p, 7, WorkloadKind::kAccumulate);
    const auto& x = w.tensors[0];
    const float large = d == Dtype::kF16 ? 16384.0f : 1099511627776.0f;
    for (std::size_t r = 0; r < 10; ++r) {
      float lo = INFINITY, hi = -INFINITY;
      for (std::size_t c = 0; c < 33; ++c) {
        const float v = kforge::load_element(x, r * 33 + c);
        REQUIRE(v != 0.0f);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      switch (kforge::boundary_row_kind(r)) {
        case kforge::BoundaryRow::kOffset: CHECK((lo >= 63.0f && hi <= 65.0f)); break;
        case kforge::BoundaryRow::kConstant: CHECK(lo == hi); break;
        case kforge::BoundaryRow::kLarge: CHECK(hi - lo > large / 2); break;
        case kforge::BoundaryRow::kTiny: CHECK((std::fabs(lo) <= 1 / 256.0f && std::fabs(hi) <= 1 / 256.0f)); break;
        case kforge::BoundaryRow::kUniform: CHECK((lo > -1.0f && hi < 1.0f)); break;
      }
    }
    auto ref = kLayernorm.reference(p, w);
    for (std::size_t i = 0; i < ref.value.size(); ++i) {
      REQUIRE(std::isfinite(ref.value[i]));
      REQUIRE(std::isfinite(ref.scale[i]));
    }
    p.op = "rmsnorm";
    Workload wr = kRmsnorm.make_workload(p, 7, WorkloadKind::kAccumulate);
    CHECK(wr.tensors[0].bytes == x.bytes);
    auto rr = kRmsnorm.reference(p, wr);
    for (double v : rr.value) REQUIRE(std::isfinite(v));
  }
}

TEST_CASE("layernorm, rmsnorm: a workload of another problem gives a reference that fails",
          "[layernorm][rmsnorm]") {
  Workload w = kLayernorm.make_workload(problem("layernorm", 2, 3), 1, WorkloadKind::kPoisonedOutput);
  auto ref = kLayernorm.reference(problem("layernorm", 3, 3), w);
  REQUIRE(ref.value.size() == 9);
  for (double v : ref.value) CHECK(std::isnan(v));
  Workload wr = kRmsnorm.make_workload(problem("rmsnorm", 2, 3), 1, WorkloadKind::kPoisonedOutput);
  auto rr = kRmsnorm.reference(problem("rmsnorm", 2, 4), wr);
  for (double v : rr.value) CHECK(std::isnan(v));
}
