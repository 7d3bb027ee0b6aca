// The swiglu operator: problem checks, cost model, workloads (plain and
// saturating gates), the reference on a hand-computed row, tolerance, NaN.
#include "generator/swiglu_operator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "generator/workload_builder.hpp"

using kforge::Dtype;
using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const kforge::SwigluOperator kSwiglu;

Problem problem(std::int64_t rows, std::int64_t cols) {
  Problem p;
  p.op = "swiglu";
  p.dims = {{"rows", rows}, {"cols", cols}};
  return p;
}

double silu(double a) {
  return a / (1.0 + std::exp(-a));
}

}  // namespace

TEST_CASE("swiglu: normalize checks dims, attributes and layout", "[swiglu]") {
  REQUIRE(kSwiglu.normalize(problem(2, 3)).ok());
  auto bad = kSwiglu.normalize(problem(2, std::int64_t{1} << 30));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "swiglu: dimension cols = 1073741824 is too large (X's rows hold 2 cols elements, indexed by a "
        "32-bit int)");
  Problem attr = problem(2, 3);
  attr.attrs["kind"] = "sum";
  bad = kSwiglu.normalize(attr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "swiglu: unknown attribute 'kind' (swiglu has none)");
  Problem missing = problem(2, 3);
  missing.dims.erase("cols");
  CHECK(kSwiglu.normalize(missing).error().message == "swiglu: dimension cols is missing");
}

TEST_CASE("swiglu: flops, bytes and arguments", "[swiglu]") {
  Problem p = *kSwiglu.normalize(problem(4, 6));
  p.dtype = Dtype::kBF16;
  CHECK(kSwiglu.flops(p) == 4.0 * 24);
  CHECK(kSwiglu.bytes(p) == 24.0 * (2 * 2 + 4));
  const auto args = kSwiglu.arguments(p);
  REQUIRE(args.size() == 4);
  CHECK(args[2].elements == 48);  // gate | up
  CHECK(args[3].elements == 24);
}

TEST_CASE("swiglu: reference on a hand-computed row", "[swiglu]") {
  Problem p = *kSwiglu.normalize(problem(1, 3));
  Workload w = kSwiglu.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  const std::vector<float> x = {1, -2, 0.5f, 3, 4, -1};  // gates 1, -2, 0.5; ups 3, 4, -1
  std::memcpy(w.tensors[0].bytes.data(), x.data(), x.size() * sizeof(float));
  auto ref = kSwiglu.reference(p, w);
  const double want[3] = {silu(1) * 3, silu(-2) * 4, silu(0.5) * -1};
  for (int j = 0; j < 3; ++j) CHECK(ref.value[j] == Approx(want[j]).epsilon(1e-14));
  CHECK(ref.scale[1] == 8.0);
  CHECK(ref.tolerance == 12.0 * std::ldexp(1.0, -24));
}

TEST_CASE("swiglu: NaN stays in its element", "[swiglu]") {
  Problem p = *kSwiglu.normalize(problem(2, 4));
  Workload w = kSwiglu.make_workload(p, 5, WorkloadKind::kPoisonedOutput);
  kforge::store_element(w.tensors[0], 1, std::nanf(""));          // gate of (0, 1)
  kforge::store_element(w.tensors[0], 8 + 4 + 2, std::nanf(""));  // up of (1, 2)
  auto ref = kSwiglu.reference(p, w);
  for (std::size_t i = 0; i < 8; ++i) CHECK(std::isnan(ref.value[i]) == (i == 1 || i == 6));
}

TEST_CASE("swiglu: workloads are deterministic and the second saturates the gate", "[swiglu]") {
  Problem p = *kSwiglu.normalize(problem(3, 10));
  Workload a = kSwiglu.make_workload(p, 42, WorkloadKind::kPoisonedOutput);
  CHECK(a.tensors[0].bytes == kSwiglu.make_workload(p, 42, WorkloadKind::kPoisonedOutput).tensors[0].bytes);
  CHECK(std::isnan(a.tensors[1].f32()[0]));
  Workload b = kSwiglu.make_workload(p, 42, WorkloadKind::kAccumulate);
  int saturated = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    for (std::size_t j = 0; j < 10; ++j) {
      const float g = kforge::load_element(b.tensors[0], i * 20 + j);
      CHECK(g != 0.0f);
      if (g < -88.0f) ++saturated;  // e^-g overflows f32
      // The up half is untouched.
      CHECK(kforge::load_element(b.tensors[0], i * 20 + 10 + j) ==
            kforge::load_element(a.tensors[0], i * 20 + 10 + j));
    }
  }
  CHECK(saturated == 6);
}

TEST_CASE("swiglu: a workload of another problem gives a reference that fails", "[swiglu]") {
  Workload w = kSwiglu.make_workload(*kSwiglu.normalize(problem(2, 3)), 1, WorkloadKind::kPoisonedOutput);
  auto ref = kSwiglu.reference(*kSwiglu.normalize(problem(2, 4)), w);
  REQUIRE(ref.value.size() == 8);
  CHECK(std::isnan(ref.value[0]));
}
