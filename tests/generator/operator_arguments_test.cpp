// Operator::arguments: every operator's contract, sized without allocating,
// agrees with the workload it makes (names, kinds, dtypes, sizes, dims).
#include <catch2/catch.hpp>
#include <limits>
#include <map>

#include "generator/operator.hpp"

using kforge::ArgumentSpec;
using kforge::OperatorArg;
using kforge::Problem;
using kforge::WorkloadKind;

namespace {

Problem normalized(const std::string& op, std::map<std::string, std::int64_t> dims,
                   std::map<std::string, std::string> attrs = {}, bool bias = false) {
  Problem p;
  p.op = op;
  p.dims = std::move(dims);
  p.attrs = std::move(attrs);
  p.epilogue.bias = bias;
  auto n = kforge::find_operator(op)->normalize(p);
  INFO(op << ": " << (n.ok() ? "" : n.error().message));
  REQUIRE(n.ok());
  return *n;
}

/// The arguments of `p` against both of its workloads, one by one.
void check_against_workloads(const Problem& p) {
  const kforge::Operator& op = *kforge::find_operator(p.op);
  const std::vector<ArgumentSpec> specs = op.arguments(p);
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    const kforge::Workload w = op.make_workload(p, 7, kind);
    REQUIRE(specs.size() == w.args.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const ArgumentSpec& s = specs[i];
      const OperatorArg& a = w.args[i];
      INFO(p.key() << " argument " << i << " " << a.name);
      CHECK(s.name == a.name);
      REQUIRE(s.kind == a.kind);
      if (a.kind == OperatorArg::Kind::kTensor) {
        const kforge::HostTensor& t = w.tensors[a.tensor];
        CHECK(s.dtype == t.dtype);
        CHECK(s.elements == t.elements());
        CHECK(s.bytes() == t.bytes.size());
        CHECK(s.is_output == (a.tensor == w.output));
      } else if (a.kind == OperatorArg::Kind::kInt32 && s.value) {
        CHECK(*s.value == a.i32);
      }
    }
  }
}

}  // namespace

TEST_CASE("every operator's arguments match its workloads", "[operator][arguments]") {
  check_against_workloads(normalized("gemm", {{"M", 5}, {"N", 3}, {"K", 4}, {"batch", 2}}));
  check_against_workloads(normalized("gemm", {{"M", 5}, {"N", 3}, {"K", 4}}, {}, true));
  check_against_workloads(normalized("attention", {{"B", 1}, {"H", 2}, {"S", 3}, {"SK", 5}, {"D", 4}}));
  check_against_workloads(normalized("layernorm", {{"rows", 3}, {"cols", 5}}));
  check_against_workloads(normalized("rmsnorm", {{"rows", 3}, {"cols", 5}}));
  check_against_workloads(normalized("reduce", {{"rows", 3}, {"cols", 5}}));
  check_against_workloads(
      normalized("reduce", {{"rows", 3}, {"cols", 5}}, {{"axis", "all"}, {"kind", "max"}}));
  check_against_workloads(normalized("softmax", {{"rows", 3}, {"cols", 5}}));
  check_against_workloads(normalized("transpose", {{"rows", 3}, {"cols", 5}, {"batch", 2}}));
  check_against_workloads(normalized("rope", {{"tokens", 3}, {"heads", 2}, {"head_dim", 6}}));
  check_against_workloads(
      normalized("rope", {{"tokens", 1}, {"heads", 3}, {"head_dim", 4}}, {{"pairing", "interleaved"}}));
  check_against_workloads(normalized("swiglu", {{"rows", 3}, {"cols", 5}}));
}

TEST_CASE("gemm's contract: dims fixed, bias accessed only with a bias epilogue", "[operator][arguments]") {
  const auto plain =
      kforge::find_operator("gemm")->arguments(normalized("gemm", {{"M", 128}, {"N", 128}, {"K", 64}}));
  REQUIRE(plain.size() == 9);
  CHECK(plain[0].value == 128);
  CHECK_FALSE(plain[3].value.has_value());  // alpha is free
  CHECK(plain[7].name == "C");
  CHECK(plain[7].bytes() == 128 * 128 * 4);
  CHECK_FALSE(plain[8].accessed);
  const auto fused = kforge::find_operator("gemm")->arguments(
      normalized("gemm", {{"M", 128}, {"N", 128}, {"K", 64}}, {}, true));
  CHECK(fused[8].accessed);
}

TEST_CASE("sizes too large to address saturate instead of wrapping", "[operator][arguments]") {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  CHECK(kforge::saturating_product({1ull << 40, 1ull << 30}) == max);
  CHECK(kforge::saturating_product({200000, 200000}) == 40000000000ull);
  ArgumentSpec huge;
  huge.kind = OperatorArg::Kind::kTensor;
  huge.elements = max / 2;
  CHECK(huge.bytes() == max);
}
