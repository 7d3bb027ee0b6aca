// Manifest parsing: a valid manifest, and one case per class of bad input, each
// checking that the message names the file and the field.
#include "generator/manifest.hpp"

#include <catch2/catch.hpp>

#include "tests/generator/generator_fixtures.hpp"

using kforge::test::gemm_manifest_json;
using kforge::test::parse_manifest;
using nlohmann::json;

namespace {

std::string error_of(const json& j) {
  auto m = parse_manifest(j);
  if (m) FAIL("manifest parsed but should not:\n" << j.dump(2));
  CHECK(m.error().code == kforge::ErrorCode::kBadInput);
  CHECK_THAT(m.error().message, Catch::StartsWith("t/manifest.json: "));
  CHECK(m.error().message.find('\n') == std::string::npos);
  return m.error().message;
}

std::string error_of_text(const std::string& text) {
  auto m = kforge::TemplateManifest::parse(text, "t/manifest.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == kforge::ErrorCode::kBadInput);
  return m.error().message;
}

const char* kDefaultProbe =
    "(default configuration BK8_BM32_BN32_TM2_TN2 on the probe problem "
    "gemm/K=256,M=256,N=256,batch=1/f32/NN)";

}  // namespace

TEST_CASE("manifest: a valid manifest parses", "[manifest]") {
  auto m = parse_manifest(gemm_manifest_json());
  if (!m) FAIL(m.error().message);
  CHECK(m->path == "t/manifest.json");
  CHECK(m->name == "gemm_test");
  CHECK(m->op == "gemm");
  CHECK(m->description == "a tiled SIMT gemm for tests");
  CHECK(m->source == "gemm_test.c");
  CHECK(m->kernel == "gemm_test");
  CHECK(m->targets == std::vector<std::string>{"opencl", "cuda", "hip"});
  CHECK(m->arch_guard.empty());
  CHECK(m->dtypes == std::vector<kforge::Dtype>{kforge::Dtype::kF32, kforge::Dtype::kF16});
  REQUIRE(m->layouts.size() == 4);
  CHECK(m->layouts[2].name() == "TN");
  REQUIRE(m->parameters.size() == 5);
  CHECK(m->parameters[0].name == "BM");
  CHECK(m->parameters[0].values == std::vector<std::int64_t>{16, 32, 64});
  CHECK(m->parameters[0].default_value == 32);
  CHECK(m->parameters[0].doc == "rows of C per block");
  CHECK(m->parameters[2].doc.empty());
  REQUIRE(m->constraints.size() == 2);
  CHECK(m->constraints[1].field == "constraints[1]");
  CHECK(m->constraints[1].expr.text() == "BN % TN == 0");
  REQUIRE(m->envelope.size() == 1);
  CHECK(m->envelope[0].field == "envelope[0]");
  CHECK(m->block[1].field == "launch.block[1]");
  CHECK(m->grid[2].expr.text() == "batch");
  REQUIRE(m->local_memory_bytes.has_value());
  CHECK(m->local_memory_bytes->field == "local_memory_bytes");
  CHECK(m->default_config().canonical_name() == "BK8_BM32_BN32_TM2_TN2");
  REQUIRE(m->find_parameter("TN") != nullptr);
  CHECK(m->find_parameter("TN")->values.size() == 3);
  CHECK(m->find_parameter("XX") == nullptr);
  CHECK(m->supports(kforge::Dtype::kF16));
  CHECK_FALSE(m->supports(kforge::Dtype::kBF16));
  CHECK(m->supports(kforge::Layout{true, false}));
  CHECK(m->supports_target("hip"));
  CHECK_FALSE(m->supports_target("vulkan"));
}

TEST_CASE("manifest: optional fields may be left out", "[manifest]") {
  json j = gemm_manifest_json();
  for (const char* key : {"description", "arch_guard", "constraints", "envelope", "local_memory_bytes"}) {
    j.erase(key);
  }
  j["parameters"][0].erase("doc");
  auto m = parse_manifest(j);
  if (!m) FAIL(m.error().message);
  CHECK(m->constraints.empty());
  CHECK_FALSE(m->local_memory_bytes.has_value());
}

TEST_CASE("manifest: JSON syntax errors give the byte offset", "[manifest]") {
  std::string msg = error_of_text("{\"schema_version\": 1,, }");
  CHECK_THAT(msg, Catch::StartsWith("t/manifest.json: JSON syntax error at byte 22: "));
  CHECK_THAT(error_of_text("[1, 2]"),
             Catch::Equals("t/manifest.json: expected a JSON object at the top level, got array"));
  CHECK_THAT(error_of_text(R"({"schema_version": 1, "name": "a", "name": "b"})"),
             Catch::Equals("t/manifest.json: name: field appears twice in one object"));
}

TEST_CASE("manifest: missing required fields", "[manifest]") {
  for (const char* key : {"schema_version", "name", "operator", "source", "kernel", "targets", "dtypes",
                          "layouts", "parameters", "launch"}) {
    json j = gemm_manifest_json();
    j.erase(key);
    CHECK(error_of(j) == std::string("t/manifest.json: ") + key + ": missing (required)");
  }
  json j = gemm_manifest_json();
  j["launch"].erase("grid");
  CHECK(error_of(j) == "t/manifest.json: launch.grid: missing (required)");
  j = gemm_manifest_json();
  j["parameters"][1].erase("default");
  CHECK(error_of(j) == "t/manifest.json: parameters[1].default: missing (required)");
}

TEST_CASE("manifest: wrong types", "[manifest]") {
  json j = gemm_manifest_json();
  j["targets"] = "opencl";
  CHECK(error_of(j) == "t/manifest.json: targets: expected a non-empty array of strings, got string");
  j = gemm_manifest_json();
  j["name"] = 7;
  CHECK(error_of(j) == "t/manifest.json: name: expected a string, got number");
  j = gemm_manifest_json();
  j["parameters"][0]["values"] = {16, "32"};
  CHECK(error_of(j) ==
        "t/manifest.json: parameters[0].values[1]: expected a non-negative 64-bit integer, got "
        "string");
  j = gemm_manifest_json();
  j["parameters"][0]["values"] = {16.5};
  CHECK_THAT(error_of(j), Catch::StartsWith("t/manifest.json: parameters[0].values[0]: "));
  j = gemm_manifest_json();
  j["constraints"][1] = 3;
  CHECK(error_of(j) == "t/manifest.json: constraints[1]: expected an expression string, got number");
  j = gemm_manifest_json();
  j["launch"]["block"] = {"1", "1"};
  CHECK(error_of(j) == "t/manifest.json: launch.block: expected 3 expressions (x, y, z), got 2");
  j = gemm_manifest_json();
  j["schema_version"] = "1";
  CHECK(error_of(j) == "t/manifest.json: schema_version: expected an integer, got string");
}

TEST_CASE("manifest: unknown fields are errors, with a suggestion", "[manifest]") {
  json j = gemm_manifest_json();
  j["constriants"] = j["constraints"];
  j.erase("constraints");
  CHECK(error_of(j) == "t/manifest.json: unknown field 'constriants' (did you mean 'constraints'?)");
  j = gemm_manifest_json();
  j["parameters"][2]["dflt"] = 8;
  CHECK_THAT(error_of(j), Catch::StartsWith("t/manifest.json: parameters[2]: unknown field 'dflt'"));
  j = gemm_manifest_json();
  j["launch"]["threads"] = {"1", "1", "1"};
  CHECK(error_of(j) == "t/manifest.json: launch: unknown field 'threads'");
  j = gemm_manifest_json();
  j["new\nline"] = 1;  // echoed escaped: messages stay on one line
  CHECK(error_of(j) == "t/manifest.json: unknown field 'new\\nline'");
}

TEST_CASE("manifest: parameter names", "[manifest]") {
  json j = gemm_manifest_json();
  for (const char* good : {"bn", "block_size_x", "Tile_M"}) {  // as Kernel Tuner's kernels name them
    json k = gemm_manifest_json();
    k["parameters"].push_back({{"name", good}, {"values", {1, 2}}, {"default", 1}});
    auto m = parse_manifest(k);
    INFO(good << ": " << (m.ok() ? "" : m.error().message));
    CHECK(m.ok());
  }
  for (const char* bad : {"BN2", "tile2_x", "_bn", "bn_", "b__n", "2b", "b-n"}) {
    j["parameters"][1]["name"] = bad;
    INFO(bad);
    CHECK_THAT(error_of(j), Catch::StartsWith("t/manifest.json: parameters[1].name: '" + std::string(bad) +
                                              "' is not a parameter name (a C identifier of letters"));
  }
  j["parameters"][1]["name"] = "max_block_threads";
  CHECK(error_of(j) ==
        "t/manifest.json: parameters[1].name: 'max_block_threads' is reserved: a device limit in "
        "expressions (docs/templates.md)");
  j["parameters"][1]["name"] = "KF_THREAD_X";
  CHECK(error_of(j) ==
        "t/manifest.json: parameters[1].name: 'KF_THREAD_X' is reserved: the prelude's KF_/kf_ names");
  j["parameters"][1]["name"] = "dtype_bytes";
  CHECK_THAT(error_of(j), Catch::Contains("'dtype_bytes' is reserved"));
  j["parameters"][1]["name"] = "K";
  CHECK(error_of(j) == "t/manifest.json: parameters[1].name: 'K' is already a name of operator gemm");
  j = gemm_manifest_json();
  j["parameters"][3]["name"] = "BM";
  CHECK(error_of(j) ==
        "t/manifest.json: parameters[3].name: 'BM' is declared twice (first at parameters[0])");
}

TEST_CASE("manifest: parameter values and default", "[manifest]") {
  json j = gemm_manifest_json();
  j["parameters"][0]["default"] = 48;
  CHECK(error_of(j) == "t/manifest.json: parameters[0].default: 48 is not among values [16, 32, 64]");
  j = gemm_manifest_json();
  j["parameters"][0]["values"] = json::array();
  CHECK(error_of(j) ==
        "t/manifest.json: parameters[0].values: expected a non-empty array of integers, got []");
  j = gemm_manifest_json();
  j["parameters"][0]["values"] = {16, 32, 16};
  CHECK(error_of(j) == "t/manifest.json: parameters[0].values[2]: 16 appears twice");
  j = gemm_manifest_json();
  j["parameters"][0]["values"] = {-16, 32};
  CHECK(error_of(j) == "t/manifest.json: parameters[0].values[0]: -16 is negative");
  j = gemm_manifest_json();
  j["parameters"] = json::array();
  CHECK(error_of(j) == "t/manifest.json: parameters: expected a non-empty array of objects, got []");
}

TEST_CASE("manifest: expressions are parsed and their names checked", "[manifest]") {
  json j = gemm_manifest_json();
  j["constraints"][1] = "BN % BX == 0";
  CHECK(error_of(j) == "t/manifest.json: constraints[1]: position 5: unknown name 'BX'");
  j = gemm_manifest_json();
  j["launch"]["grid"][1] = "ceil_div(M, BM) + Mx";
  CHECK(error_of(j) == "t/manifest.json: launch.grid[1]: position 18: unknown name 'Mx'");
  j = gemm_manifest_json();
  j["envelope"] = {"M >= 1", "K % 4 == 0 && k > 0"};
  CHECK(error_of(j) == "t/manifest.json: envelope[1]: position 14: unknown name 'k'");
  j = gemm_manifest_json();
  j["local_memory_bytes"] = "BK * (BM + BN) * 4 +";
  CHECK(error_of(j) == "t/manifest.json: local_memory_bytes: position 20: unexpected end of expression");
  // Dims, extra names and device limits are all readable.
  j = gemm_manifest_json();
  j["constraints"] = {"BM * BN / (TM * TN) <= max_block_threads", "trans_a + trans_b >= 0",
                      "dtype_bytes * BK * (BM + BN) <= local_mem_bytes",
                      "compute_units >= 1 && simd_width >= 1 && batch >= 1 && K >= 1"};
  auto m = parse_manifest(j);
  if (!m) FAIL(m.error().message);
}

TEST_CASE("manifest: the default configuration must work on the probe problem", "[manifest]") {
  json j = gemm_manifest_json();
  j["launch"]["grid"][0] = "ceil_div(N, BN - 32)";
  CHECK(error_of(j) == std::string("t/manifest.json: launch.grid[0]: position 0: division by "
                                   "zero ") +
                           kDefaultProbe);
  j = gemm_manifest_json();
  j["constraints"].push_back("BM >= 64");
  CHECK(error_of(j) ==
        "t/manifest.json: constraints[2]: default configuration BK8_BM32_BN32_TM2_TN2 breaks "
        "'BM >= 64'");
  j = gemm_manifest_json();
  j["constraints"].push_back("M % 512 == 0");
  CHECK_THAT(error_of(j), Catch::Contains("constraints[2]: default configuration "
                                          "BK8_BM32_BN32_TM2_TN2 breaks 'M % 512 == 0' on the "
                                          "probe problem gemm/K=256,M=256,N=256,batch=1/f32/NN"));
  j = gemm_manifest_json();
  j["envelope"].push_back("K / (BK - 8) > 0");
  CHECK(error_of(j) == std::string("t/manifest.json: envelope[1]: position 2: division by "
                                   "zero ") +
                           kDefaultProbe);
  j = gemm_manifest_json();
  j["launch"]["block"][2] = "BK - 8";
  CHECK(error_of(j) ==
        "t/manifest.json: launch.block[2]: default configuration BK8_BM32_BN32_TM2_TN2 gives 0 "
        "on the probe problem; must be >= 1");
  j = gemm_manifest_json();
  j["launch"]["block"] = {"BN", "BM", "1"};
  CHECK(error_of(j) ==
        "t/manifest.json: launch.block: default configuration BK8_BM32_BN32_TM2_TN2 uses 1024 "
        "threads per block, more than the baseline limit 256");
  j = gemm_manifest_json();
  j["local_memory_bytes"] = "BK * BM * BN * 4";  // 32768: exactly the baseline, allowed
  auto ok = parse_manifest(j);
  CHECK(ok.ok());
  j["local_memory_bytes"] = "BK * BM * BN * 4 + 1";
  CHECK(error_of(j) ==
        "t/manifest.json: local_memory_bytes: default configuration BK8_BM32_BN32_TM2_TN2 uses "
        "32769 bytes, more than the baseline limit 32768");
  // An envelope need not hold on the probe problem.
  j = gemm_manifest_json();
  j["envelope"].push_back("M >= 4096");
  CHECK(parse_manifest(j).ok());
}

TEST_CASE("manifest: schema_version", "[manifest]") {
  json j = gemm_manifest_json();
  j["schema_version"] = 2;
  j["a_field_from_the_future"] = true;  // the version is checked before unknown fields
  CHECK(error_of(j) ==
        "t/manifest.json: schema_version: 2: written for a newer kforge (this kforge reads "
        "version 1)");
  j["schema_version"] = 0;
  j.erase("a_field_from_the_future");
  CHECK(error_of(j) ==
        "t/manifest.json: schema_version: 0: unsupported version (this kforge reads version 1)");
}

TEST_CASE("manifest: operator, targets, dtypes, layouts, identifiers", "[manifest]") {
  json j = gemm_manifest_json();
  j["operator"] = "gem";
  CHECK_THAT(error_of(j), Catch::StartsWith("t/manifest.json: operator: unknown operator 'gem' (known: gemm, "));
  j = gemm_manifest_json();
  j["dtypes"] = {"f32", "f64"};
  CHECK(error_of(j) == "t/manifest.json: dtypes[1]: unknown dtype 'f64' (known: f32, f16, bf16)");
  j = gemm_manifest_json();
  j["dtypes"] = json::array();
  CHECK(error_of(j) == "t/manifest.json: dtypes: expected a non-empty array of strings, got []");
  j = gemm_manifest_json();
  j["layouts"] = {"NN", "NX"};
  CHECK(error_of(j) == "t/manifest.json: layouts[1]: unknown layout 'NX' (known: NN, NT, TN, TT)");
  j = gemm_manifest_json();
  j["layouts"] = {"NN", "NN"};
  CHECK(error_of(j) == "t/manifest.json: layouts[1]: 'NN' is listed twice");
  j = gemm_manifest_json();
  j["targets"] = {"opencl", "vulkan"};
  CHECK(error_of(j) == "t/manifest.json: targets[1]: unknown target 'vulkan' (known: opencl, cuda, hip)");
  j = gemm_manifest_json();
  j["kernel"] = "gemm-test";
  CHECK(error_of(j) == "t/manifest.json: kernel: 'gemm-test' is not an identifier");
  j = gemm_manifest_json();
  j["name"] = "";
  CHECK(error_of(j) == "t/manifest.json: name: '' is not an identifier");
  for (const char* bad : {"../x.c", "/etc/passwd", "a\"b.c", "", "a//b.c"}) {
    j = gemm_manifest_json();
    j["source"] = bad;
    CHECK_THAT(error_of(j), Catch::StartsWith("t/manifest.json: source: "));
  }
  j = gemm_manifest_json();
  j["source"] = "kernels/gemm_test.cl";
  CHECK(parse_manifest(j).ok());
}

TEST_CASE("manifest: check_declared distrusts configurations", "[manifest]") {
  auto m = parse_manifest(gemm_manifest_json());
  REQUIRE(m.ok());
  kforge::Config c = m->default_config();
  CHECK(m->check_declared(c).ok());
  c.values["BM"] = 48;
  auto s = m->check_declared(c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == kforge::ErrorCode::kBadInput);
  CHECK(s.error().message ==
        "template gemm_test: parameter BM: value 48 is not declared (declared: [16, 32, 64])");
  c = m->default_config();
  c.values.erase("TN");
  REQUIRE_FALSE(m->check_declared(c).ok());
  CHECK_THAT(m->check_declared(c).error().message,
             Catch::StartsWith("template gemm_test: parameter TN: missing"));
  c = m->default_config();
  c.values["EVIL"] = 1;
  REQUIRE_FALSE(m->check_declared(c).ok());
  CHECK(m->check_declared(c).error().message == "template gemm_test: unknown parameter 'EVIL'");
}

TEST_CASE("manifest: kind says how a template becomes a kernel, checked against library", "[manifest]") {
  json j = gemm_manifest_json();
  auto plain = parse_manifest(j);
  REQUIRE(plain.ok());
  CHECK(plain->kind == kforge::TemplateKindId::kSource);
  j["kind"] = "source";
  REQUIRE(parse_manifest(j).ok());
  j["kind"] = "cutlass";
  CHECK(error_of(j) == "t/manifest.json: kind: unknown template kind 'cutlass' (known: source, library, triton)");
  j["kind"] = "library";
  CHECK(error_of(j) ==
        "t/manifest.json: library: a template of kind 'library' names its library (clblast, cublaslt, "
        "hipblaslt)");
  j = gemm_manifest_json();
  j["kind"] = "source";
  j["library"] = "clblast";
  CHECK(error_of(j) == "t/manifest.json: library: a template of kind 'source' calls no library (kind "
                       "'library' does)");
  j.erase("kind");
  j.erase("source");
  j.erase("kernel");
  auto library = parse_manifest(j);
  REQUIRE(library.ok());
  CHECK(library->kind == kforge::TemplateKindId::kLibrary);
  CHECK(library->is_library());
  CHECK(kforge::name(kforge::TemplateKindId::kLibrary) == "library");
  CHECK(kforge::parse_template_kind("source") == kforge::TemplateKindId::kSource);
  CHECK_FALSE(kforge::parse_template_kind("Source").has_value());
}

TEST_CASE("manifest: a Triton template's own fields are checked, naming the field", "[manifest]") {
  auto triton = [] {
    json j = gemm_manifest_json();
    j.erase("launch");
    j["kind"] = "triton";
    j["source"] = "kernel.py";
    j["targets"] = json::array({"cuda:sm_90a", "hip:gfx942"});
    j["arguments"] = json::array({{{"name", "M"}, {"type", "i32"}, {"bind", "M"}},
                                  {{"name", "stride"}, {"type", "i32"}, {"value", "K"}}});
    j["grid"] = json::array({"ceil_div(M, BM)", "1", "1"});
    return j;
  };
  auto m = parse_manifest(triton());
  INFO((m.ok() ? std::string() : m.error().message));
  REQUIRE(m.ok());
  CHECK(m->kind == kforge::TemplateKindId::kTriton);
  CHECK(m->targets == std::vector<std::string>{"cuda", "hip"});
  REQUIRE(m->triton);
  CHECK(m->triton->targets == std::vector<std::string>{"cuda:sm_90a", "hip:gfx942"});
  CHECK(m->triton->arguments[1].value.has_value());

  json j = triton();
  j["arguments"][1]["bind"] = "K";
  CHECK(error_of(j) == "t/manifest.json: arguments[1] (stride): give exactly one of bind, value and workspace");
  j = triton();
  j["targets"] = json::array({"opencl"});
  CHECK(error_of(j) == "t/manifest.json: targets: 'opencl' is not a Triton target (cuda:sm_XY or hip:gfxNNN)");
  j = triton();
  j["options"] = {{"num_wraps", 4}};
  CHECK(error_of(j) == "t/manifest.json: options.num_wraps: not a Triton compile option");
  j = triton();
  j.erase("grid");
  CHECK(error_of(j) == "t/manifest.json: grid: expected three expressions (programs along x, y, z)");
}

TEST_CASE("manifest: a Triton workspace argument is an element count, a pointer, zeroed or not", "[manifest]") {
  auto triton = [] {
    json j = gemm_manifest_json();
    j.erase("launch");
    j["kind"] = "triton";
    j["source"] = "kernel.py";
    j["targets"] = json::array({"cuda:sm_90a"});
    j["arguments"] = json::array({{{"name", "M"}, {"type", "i32"}, {"bind", "M"}},
                                  {{"name", "partials"}, {"type", "*fp32"}, {"workspace", "M * N * BM"}},
                                  {{"name", "tickets"}, {"type", "*i32"}, {"workspace", "ceil_div(M, BM)"},
                                   {"zeroed", true}}});
    j["grid"] = json::array({"ceil_div(M, BM)", "1", "1"});
    return j;
  };
  auto m = parse_manifest(triton());
  INFO((m.ok() ? std::string() : m.error().message));
  REQUIRE(m.ok());
  const auto& args = m->triton->arguments;
  REQUIRE(args.size() == 3);
  CHECK(args[1].workspace.has_value());
  CHECK_FALSE(args[1].zeroed);
  CHECK(args[1].bind.empty());
  CHECK(args[2].workspace.has_value());
  CHECK(args[2].zeroed);

  const std::string at = "t/manifest.json: arguments[";
  json j = triton();
  j["arguments"][1]["workspace"] = "";
  CHECK(error_of(j) == at + "1] (partials).workspace: empty: expected an element count (an expression)");
  j = triton();
  j["arguments"][1]["workspace"] = "  ";
  CHECK(error_of(j) == at + "1] (partials).workspace: empty: expected an element count (an expression)");
  j = triton();
  j["arguments"][1]["workspace"] = "M *";
  CHECK_THAT(error_of(j), Catch::StartsWith(at + "1] (partials).workspace: "));
  j = triton();
  j["arguments"][1]["workspace"] = 12;
  CHECK(error_of(j) == at + "1] (partials).workspace: expected an element count expression, got 12");
  j = triton();
  j["arguments"][2]["type"] = "i32";
  CHECK(error_of(j) == at + "2] (tickets).type: 'i32': a workspace is a pointer (*fp32, *i32, ...)");
  j = triton();
  j["arguments"][2]["zeroed"] = "yes";
  CHECK(error_of(j) == at + "2] (tickets).zeroed: expected true or false, got \"yes\"");
  j = triton();
  j["arguments"][2]["zeroed"] = 1;
  CHECK(error_of(j) == at + "2] (tickets).zeroed: expected true or false, got 1");
  j = triton();
  j["arguments"][2]["bind"] = "C";
  CHECK(error_of(j) == at + "2] (tickets): give exactly one of bind, value and workspace");
  j = triton();
  j["arguments"][0]["zeroed"] = true;
  CHECK(error_of(j) == at + "0] (M).zeroed: only a workspace is zeroed");
}
