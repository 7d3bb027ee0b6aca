// Problems: keys, epilogue names, attribute parsing and the shared attribute checks.
#include "generator/problem.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "generator/gemm_operator.hpp"

using kforge::Activation;
using kforge::Epilogue;
using kforge::dims_log2_distance;
using kforge::Problem;
using kforge::problem_family;

TEST_CASE("problem: epilogue names round-trip and bad ones are named", "[problem]") {
  for (const char* name : {"none", "bias", "relu", "gelu", "silu", "bias+relu", "bias+gelu", "bias+silu"}) {
    auto e = kforge::parse_epilogue(name);
    REQUIRE(e.ok());
    CHECK(e->name() == name);
  }
  CHECK(kforge::parse_epilogue("silu+bias")->name() == "bias+silu");
  CHECK(kforge::parse_epilogue("none")->plain());
  CHECK(kforge::parse_epilogue("bias+relu")->activation == Activation::kRelu);
  CHECK(kforge::parse_epilogue("bias+relu")->bias);
  auto bad = kforge::parse_epilogue("bias+tanh");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == kforge::ErrorCode::kBadInput);
  CHECK(bad.error().message ==
        "epilogue 'bias+tanh': unknown part 'tanh' (known: none, bias, relu, gelu, silu, bias+relu, "
        "bias+gelu, bias+silu)");
  CHECK_THAT(kforge::parse_epilogue("relu+gelu").error().message, Catch::Contains("more than one activation"));
  CHECK_THAT(kforge::parse_epilogue("bias+bias").error().message, Catch::Contains("'bias' given twice"));
  CHECK_FALSE(kforge::parse_epilogue("").ok());
  CHECK_FALSE(kforge::parse_epilogue("none+relu").ok());
}

TEST_CASE("problem: keys gain suffixes only for epilogues and attributes", "[problem]") {
  Problem p{"reduce", {{"rows", 8}, {"cols", 4096}}, kforge::Dtype::kF16, {}, {}, {}};
  CHECK(p.key() == "reduce/cols=4096,rows=8/f16/NN");
  p.attrs = {{"kind", "max"}, {"axis", "last"}};
  CHECK(p.attrs_string() == "axis=last,kind=max");
  CHECK(p.key() == "reduce/cols=4096,rows=8/f16/NN/axis=last,kind=max");
  CHECK(p.attr("kind") == "max");
  CHECK(p.attr("nope").empty());
  p.attrs.clear();
  p.epilogue = Epilogue{Activation::kRelu, true};
  CHECK(p.key() == "reduce/cols=4096,rows=8/f16/NN/bias+relu");
}

TEST_CASE("problem: attributes parse strictly", "[problem]") {
  auto a = kforge::parse_attrs("kind=max,axis=all");
  REQUIRE(a.ok());
  CHECK(*a == std::map<std::string, std::string>{{"axis", "all"}, {"kind", "max"}});
  CHECK(kforge::parse_attrs("")->empty());
  CHECK(kforge::parse_attrs("kind=max,kind=sum").error().message ==
        "attributes 'kind=max,kind=sum': kind given twice");
  for (const char* bad : {"kind", "kind=", "=max", "Kind=max", "kind=max,", "kind=m ax"}) {
    INFO(bad);
    auto r = kforge::parse_attrs(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::StartsWith("attributes '"));
  }
}

TEST_CASE("problem: an operator without an epilogue refuses one", "[problem]") {
  // A minimal operator: no epilogue, one attribute.
  struct Toy : kforge::Operator {
    std::string_view name() const override { return "toy"; }
    std::vector<std::string> dims() const override { return {"n"}; }
    std::map<std::string, std::int64_t> default_dims() const override { return {{"n", 1}}; }
    kforge::Result<Problem> normalize(Problem p) const override {
      KF_TRY(kforge::normalize_attributes(*this, p));
      return p;
    }
    std::vector<std::string> extra_names() const override { return kforge::attribute_names(*this); }
    void add_to(kforge::Env& env, const Problem& p) const override { kforge::add_attributes_to(env, *this, p); }
    double flops(const Problem&) const override { return 0; }
    double bytes(const Problem&) const override { return 0; }
    kforge::Workload make_workload(const Problem&, std::uint64_t, kforge::WorkloadKind) const override {
      return {};
    }
    std::vector<kforge::ArgumentSpec> arguments(const Problem&) const override { return {}; }
    kforge::Reference reference(const Problem&, const kforge::Workload&) const override { return {}; }
    std::vector<kforge::AttributeSpec> attributes() const override {
      return {{"kind", {"sum", "max"}, "what to reduce with"}};
    }
  } toy;
  Problem p{"toy", {{"n", 3}}, kforge::Dtype::kF32, {}, {}, {}};
  auto n = toy.normalize(p);
  REQUIRE(n.ok());
  CHECK(n->attrs == std::map<std::string, std::string>{{"kind", "sum"}});  // the default filled in
  CHECK(n->key() == "toy/n=3/f32/NN/kind=sum");
  kforge::Env env;
  p.attrs["kind"] = "max";
  toy.add_to(env, p);
  CHECK(env["kind"] == 1);
  CHECK(toy.extra_names() == std::vector<std::string>{"kind"});
  p.attrs["kind"] = "min";
  CHECK(toy.normalize(p).error().message == "toy: attribute kind = 'min' is not one of sum, max");
  p.attrs = {{"axis", "all"}};
  CHECK(toy.normalize(p).error().message == "toy: unknown attribute 'axis' (toy reads kind)");
  p.attrs.clear();
  p.epilogue.bias = true;
  CHECK(toy.normalize(p).error().message == "toy: epilogue 'bias' is not supported (toy has no fused epilogue)");
}

TEST_CASE("problem: a family drops the dims, distance is the log2 gap summed over dims", "[problem]") {
  CHECK(problem_family("gemm/K=64,M=64,N=64,batch=1/f32/NN") == "gemm/f32/NN");
  CHECK(problem_family("gemm/K=64,M=64,N=64,batch=1/f16/NT/bias+relu") == "gemm/f16/NT/bias+relu");
  CHECK(problem_family("reduce/cols=8,rows=2/f32/NN/axis=last,kind=max") == "reduce/f32/NN/axis=last,kind=max");
  const std::map<std::string, std::int64_t> a = {{"M", 64}, {"N", 32}, {"K", 32}};
  CHECK(dims_log2_distance(a, {{"M", 128}, {"N", 8}, {"K", 32}}) == Approx(3.0));  // 1 + 2 + 0
  CHECK(dims_log2_distance(a, a) == 0.0);
  CHECK(std::isinf(dims_log2_distance(a, {{"M", 64}, {"N", 32}})));             // a dim missing
  CHECK(std::isinf(dims_log2_distance(a, {{"M", 64}, {"N", 32}, {"B", 32}})));  // another dim
  CHECK(std::isinf(dims_log2_distance(a, {{"M", 0}, {"N", 32}, {"K", 32}})));
}
