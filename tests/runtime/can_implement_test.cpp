// can_implement: each template-level gap is found, in order, and named.
#include "runtime/catalog/can_implement.hpp"

#include <catch2/catch.hpp>
#include <string>

using namespace kforge;

namespace {

// A planted-style manifest with one field replaced.
std::string manifest_text(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> fields = {
      {"operator", "\"gemm\""}, {"targets", "[\"opencl\", \"cuda\"]"}, {"dtypes", "[\"f32\"]"},
      {"layouts", "[\"NN\"]"},  {"envelope", "[\"K >= 4\"]"},          {"arch_guard", "[]"},
  };
  fields[field] = value;
  std::string text = R"json({"schema_version": 1, "name": "probe", "source": "probe.c", "kernel": "probe",
    "parameters": [{"name": "BX", "values": [8, 16], "default": 8, "doc": "threads"}],
    "constraints": ["BX <= max_block_threads"],
    "launch": {"block": ["BX", "1", "1"], "grid": ["ceil_div(N, BX)", "M", "batch"]})json";
  for (const auto& [k, v] : fields) text += ", \"" + k + "\": " + v;
  return text + "}";
}

TemplateManifest manifest(const std::string& field = "", const std::string& value = "") {
  auto m = TemplateManifest::parse(
      manifest_text(field.empty() ? "operator" : field, field.empty() ? "\"gemm\"" : value),
      "probe/manifest.json");
  REQUIRE(m.ok());
  return *m;
}

DeviceInfo cpu() {
  DeviceInfo d;
  d.backend = "opencl";
  d.arch = "cpu";
  d.max_block_threads = 1024;
  return d;
}

Problem gemm(std::int64_t k, Dtype dtype = Dtype::kF32) {
  return Problem{"gemm", {{"M", 8}, {"N", 8}, {"K", k}}, dtype, Layout{}, {}, {}};
}

ImplementGap gap(const TemplateManifest& m, const Problem& p, const DeviceInfo& d = cpu()) {
  auto fit = can_implement(m, *find_operator("gemm"), p, d);
  REQUIRE(fit.ok());
  INFO(fit->reason);
  CHECK(fit->ok() == (fit->gap == ImplementGap::kNone));
  CHECK(fit->reason.empty() == fit->ok());
  return fit->gap;
}

}  // namespace

TEST_CASE("can_implement accepts a template that fits", "[can_implement]") {
  CHECK(gap(manifest(), gemm(16)) == ImplementGap::kNone);
  CHECK(can_implement(manifest(), *find_operator("gemm"), gemm(16), cpu())->status().ok());
}

TEST_CASE("can_implement names each template-level gap", "[can_implement]") {
  TemplateManifest reduce = manifest();
  reduce.op = "reduce";  // a manifest for reduce would not read M, N and K
  CHECK(gap(reduce, gemm(16)) == ImplementGap::kWrongOperator);
  CHECK(gap(manifest("targets", "[\"cuda\"]"), gemm(16)) == ImplementGap::kNotTargeted);
  DeviceInfo sm80 = cpu();
  sm80.backend = "cuda";
  sm80.arch = "sm_80";
  CHECK(gap(manifest("arch_guard", "[\"sm_90a\"]"), gemm(16), sm80) == ImplementGap::kGuard);
  CHECK(gap(manifest(), gemm(16, Dtype::kF16)) == ImplementGap::kUnsupported);
  CHECK(gap(manifest(), gemm(2)) == ImplementGap::kEnvelope);
}

TEST_CASE("can_implement's envelope reason names the expression and the problem", "[can_implement]") {
  auto fit = can_implement(manifest(), *find_operator("gemm"), gemm(2), cpu());
  REQUIRE(fit.ok());
  CHECK_THAT(fit->reason, Catch::Contains("envelope[0] 'K >= 4'"));
  CHECK_THAT(fit->reason, Catch::Contains(gemm(2).key()));
  CHECK(fit->status().error().code == ErrorCode::kUnsupported);
}

TEST_CASE("can_implement reports an expression it cannot evaluate", "[can_implement]") {
  auto fit =
      can_implement(manifest("envelope", "[\"K / (M - 8) >= 1\"]"), *find_operator("gemm"), gemm(16), cpu());
  // Division by zero is an evaluation error, named with its field.
  REQUIRE_FALSE(fit.ok());
  CHECK_THAT(fit.error().message, Catch::Contains("envelope[0]"));
  CHECK_THAT(fit.error().message, Catch::Contains("division by zero"));
}
