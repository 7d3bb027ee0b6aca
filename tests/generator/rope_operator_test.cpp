// The rope operator: problem checks, cost model, workloads (position 0 and a
// late position), references on hand-computed heads for both pairings, NaN.
#include "generator/rope_operator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "generator/workload_builder.hpp"

using kforge::Dtype;
using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const kforge::RopeOperator kRope;

Problem problem(std::int64_t tokens, std::int64_t heads, std::int64_t head_dim,
                const char* pairing = "half") {
  Problem p;
  p.op = "rope";
  p.dims = {{"tokens", tokens}, {"heads", heads}, {"head_dim", head_dim}};
  p.attrs = {{"pairing", pairing}};
  return p;
}

std::string normalize_error(Problem p) {
  auto r = kRope.normalize(std::move(p));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kforge::ErrorCode::kBadInput);
  return r.error().message;
}

void set_x(Workload& w, const std::vector<float>& values) {
  auto& t = w.tensors[kforge::tensor_named(w, "X")];
  REQUIRE(t.elements() == values.size());
  std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
}

void set_pos0(Workload& w, int pos0) {
  for (auto& a : w.args)
    if (a.name == "pos0") a.i32 = pos0;
}

}  // namespace

TEST_CASE("rope: normalize checks dims, attributes and layout", "[rope]") {
  Problem p = problem(3, 2, 8);
  p.attrs.clear();
  auto n = kRope.normalize(p);
  REQUIRE(n.ok());
  CHECK(n->attr("pairing") == "half");
  CHECK(n->key() == "rope/head_dim=8,heads=2,tokens=3/f32/NN/pairing=half");
  CHECK(normalize_error(problem(3, 2, 7)) == "rope: dimension head_dim must be even (it holds pairs), got 7");
  Problem missing = problem(3, 2, 8);
  missing.dims.erase("heads");
  CHECK(normalize_error(missing) == "rope: dimension heads is missing");
  CHECK(normalize_error(problem(0, 2, 8)) == "rope: dimension tokens must be positive, got 0");
  Problem extra = problem(3, 2, 8);
  extra.dims["rows"] = 4;
  CHECK(normalize_error(extra) == "rope: unknown dimension 'rows' (rope reads tokens, heads, head_dim)");
  CHECK(normalize_error(problem(3, 2, 8, "neox")) ==
        "rope: attribute pairing = 'neox' is not one of half, interleaved");
  Problem t = problem(3, 2, 8);
  t.layout.trans_a = true;
  CHECK(normalize_error(t).find("rope: layout TN is not supported") == 0);
}

TEST_CASE("rope: flops, bytes and arguments", "[rope]") {
  Problem p = *kRope.normalize(problem(3, 2, 8));
  p.dtype = Dtype::kF16;
  CHECK(kRope.flops(p) == 3.0 * 48);
  CHECK(kRope.bytes(p) == 48.0 * (2 + 4));
  const auto args = kRope.arguments(p);
  REQUIRE(args.size() == 7);
  CHECK(args[2].value == 8);
  CHECK(args[3].name == "pos0");
  CHECK_FALSE(args[3].value.has_value());  // any position
  CHECK(args[5].dtype == Dtype::kF16);
  CHECK(args[6].is_output);
}

TEST_CASE("rope: reference on hand-computed heads, half pairing", "[rope]") {
  Problem p = *kRope.normalize(problem(2, 1, 4));
  Workload w = kRope.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  set_x(w, {1, 2, 3, 4, 1, 2, 3, 4});
  set_pos0(w, 5);  // positions 5 and 6
  auto ref = kRope.reference(p, w);
  // Pairs (0, 2) at frequency 1 and (1, 3) at 10000^-1/2 = 0.01.
  for (int t = 0; t < 2; ++t) {
    const double a0 = 5.0 + t, a1 = (5.0 + t) * 0.01;
    const double want[4] = {1 * std::cos(a0) - 3 * std::sin(a0), 2 * std::cos(a1) - 4 * std::sin(a1),
                            3 * std::cos(a0) + 1 * std::sin(a0), 4 * std::cos(a1) + 2 * std::sin(a1)};
    for (int j = 0; j < 4; ++j) CHECK(ref.value[t * 4 + j] == Approx(want[j]).epsilon(1e-13));
  }
  CHECK(ref.tolerance == std::ldexp(2.0, -24));
  // The scale grows with the angle (the device computes it in f32).
  const double k = 5.0 * std::log2(10000.0) + 4.0;
  CHECK(ref.scale[0] == Approx(4.0 * (6.0 + k * 5.0)).epsilon(1e-13));
  CHECK(ref.scale[5] == Approx(6.0 * (6.0 + k * 0.06)).epsilon(1e-13));
}

TEST_CASE("rope: reference on a hand-computed head, interleaved pairing", "[rope]") {
  Problem p = *kRope.normalize(problem(1, 1, 4, "interleaved"));
  Workload w = kRope.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  set_x(w, {1, 2, 3, 4});
  set_pos0(w, 2);
  auto ref = kRope.reference(p, w);
  // Pairs (0, 1) at frequency 1 and (2, 3) at 0.01.
  const double a0 = 2.0, a1 = 0.02;
  const double want[4] = {1 * std::cos(a0) - 2 * std::sin(a0), 2 * std::cos(a0) + 1 * std::sin(a0),
                          3 * std::cos(a1) - 4 * std::sin(a1), 4 * std::cos(a1) + 3 * std::sin(a1)};
  for (int j = 0; j < 4; ++j) CHECK(ref.value[j] == Approx(want[j]).epsilon(1e-13));
}

TEST_CASE("rope: position 0 is the identity, and NaN stays in its pair", "[rope]") {
  Problem p = *kRope.normalize(problem(1, 2, 6));
  Workload w = kRope.make_workload(p, 3, WorkloadKind::kPoisonedOutput);
  auto ref = kRope.reference(p, w);
  for (std::size_t j = 0; j < 12; ++j) CHECK(ref.value[j] == kforge::load_element(w.tensors[0], j));
  kforge::store_element(w.tensors[0], 1, std::nanf(""));  // head 0, pair (1, 4)
  ref = kRope.reference(p, w);
  for (std::size_t j = 0; j < 12; ++j) CHECK(std::isnan(ref.value[j]) == (j == 1 || j == 4));
}

TEST_CASE("rope: workloads are deterministic and the second is a late position", "[rope]") {
  Problem p = *kRope.normalize(problem(3, 2, 8));
  Workload a = kRope.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
  Workload b = kRope.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
  CHECK(a.tensors[0].bytes == b.tensors[0].bytes);
  CHECK(std::isnan(a.tensors[1].f32()[0]));
  CHECK(kforge::scalar_named(a, "theta") == 10000.0f);
  Workload late = kRope.make_workload(p, 42, WorkloadKind::kAccumulate);
  CHECK(late.args[3].i32 == 4093);
  CHECK(kforge::scalar_named(late, "theta") == 500000.0f);
  CHECK(kforge::load_element(late.tensors[0], 5) == 256.0f * kforge::load_element(a.tensors[0], 5));
  for (std::size_t i = 0; i < a.tensors[0].elements(); ++i)
    CHECK(kforge::load_element(a.tensors[0], i) != 0.0f);
}

TEST_CASE("rope: a workload of another problem gives a reference that fails", "[rope]") {
  Workload w = kRope.make_workload(*kRope.normalize(problem(2, 2, 4)), 1, WorkloadKind::kPoisonedOutput);
  auto ref = kRope.reference(*kRope.normalize(problem(2, 2, 8)), w);
  REQUIRE(ref.value.size() == 32);
  CHECK(std::isnan(ref.value[0]));
}
