// The rmsnorm operator's reference on a hand-computed row (the checks it
// shares with layernorm are in layernorm_operator_test.cpp).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "generator/rmsnorm_operator.hpp"
#include "generator/row_norm.hpp"
#include "generator/workload_builder.hpp"

using kforge::Problem;
using kforge::Workload;
using kforge::WorkloadKind;

namespace {

const kforge::RmsnormOperator kRmsnorm;

Problem problem(const char* op, std::int64_t rows, std::int64_t cols) {
  Problem p;
  p.op = op;
  p.dims = {{"rows", rows}, {"cols", cols}};
  return p;
}

void set_f32(Workload& w, const char* name, const std::vector<float>& values) {
  auto& t = w.tensors[kforge::tensor_named(w, name)];
  REQUIRE(t.elements() == values.size());
  std::memcpy(t.bytes.data(), values.data(), values.size() * sizeof(float));
}

}  // namespace

TEST_CASE("rmsnorm: reference on a hand-computed row", "[rmsnorm]") {
  Problem p = problem("rmsnorm", 1, 4);
  Workload w = kRmsnorm.make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  set_f32(w, "X", {1, -2, 3, -4});  // mean square 7.5
  set_f32(w, "W", {1, 2, -1, 0.5f});
  auto ref = kRmsnorm.reference(p, w);
  const double r = 1.0 / std::sqrt(7.5 + kforge::kRowNormEps);
  const std::vector<double> want{r, -4 * r, -3 * r, -2 * r};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(ref.value[i] == Approx(want[i]).epsilon(1e-14));
    CHECK(ref.scale[i] == Approx(std::fabs(want[i])).epsilon(1e-14));
  }
  CHECK(ref.tolerance == kforge::gamma_f32(20));
}
