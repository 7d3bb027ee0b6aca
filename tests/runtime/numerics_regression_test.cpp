// Numerical regression fixtures: tests/data/numerics/<operator>.json freezes,
// per template, a few cases (template, configuration, problem, dtype, layout,
// epilogue, attributes, seed, validation run) and the error each reached
// (error_ratio: worst |out - ref| / threshold; error_norm: ||out - ref|| /
// ||ref||). This test recomputes them on PoCL and fails when either is worse
// than recorded by more than the margin of docs/tolerances.md ("Numerical
// regression fixtures"): measured > max(2 * recorded, recorded + floor).
//
// KFORGE_UPDATE_NUMERICS=1 rewrites the files with the values measured now
// (after a deliberate change; review the diff). A case whose values are
// missing fails until the file is regenerated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/runtime/coverage_runner.hpp"

using namespace kforge;

namespace {

/// The margin (docs/tolerances.md): a measured error passes while it is at
/// most max(kFactor * recorded, recorded + floor).
constexpr double kFactor = 2.0;
constexpr double kRatioFloor = 0.001;  ///< in units of the tolerance threshold
constexpr double kNormFloor = 1.0e-7;  ///< normwise relative error, about 2u of f32

struct NumericsCase {
  std::string tpl, config, dims, dtype, layout, epilogue, attrs, run;
  std::uint64_t seed = 0;
  std::optional<double> error_ratio, error_norm;
};

std::string numerics_path(const std::string& op) {
  return std::string(KFORGE_TEST_DATA_DIR) + "/numerics/" + op + ".json";
}

bool update_mode() {
  const char* v = std::getenv("KFORGE_UPDATE_NUMERICS");
  return v != nullptr && std::string(v) == "1";
}

/// Reads one file; a malformed field fails with file, case index, field and value.
std::vector<NumericsCase> load_cases(const std::string& path, const std::string& op) {
  std::ifstream in(path);
  if (!in.good()) FAIL(path << ": cannot be read");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) FAIL(path << ": not valid JSON");
  if (!j.is_object() || j.value("operator", "") != op || !j.contains("cases") || !j["cases"].is_array()) {
    FAIL(path << ": expected {\"operator\": \"" << op << "\", \"cases\": [...]}");
  }
  std::vector<NumericsCase> out;
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    const nlohmann::json& c = j["cases"][i];
    auto text = [&](const char* field, const char* fallback) -> std::string {
      if (!c.contains(field)) {
        if (fallback != nullptr) return fallback;
        FAIL(path << ": cases[" << i << "]." << field << " is missing");
      }
      if (!c[field].is_string()) FAIL(path << ": cases[" << i << "]." << field << " = " << c[field].dump() << " is not a string");
      return c[field].get<std::string>();
    };
    auto number = [&](const char* field) -> std::optional<double> {
      if (!c.contains(field) || c[field].is_null()) return std::nullopt;
      if (!c[field].is_number() || c[field].get<double>() < 0) {
        FAIL(path << ": cases[" << i << "]." << field << " = " << c[field].dump() << " is not a number >= 0");
      }
      return c[field].get<double>();
    };
    NumericsCase nc;
    nc.tpl = text("template", nullptr);
    nc.config = text("config", nullptr);
    nc.dims = text("dims", nullptr);
    nc.dtype = text("dtype", nullptr);
    nc.layout = text("layout", "NN");
    nc.epilogue = text("epilogue", "none");
    nc.attrs = text("attrs", "");
    nc.run = text("run", nullptr);
    if (nc.run != "first" && nc.run != "second") FAIL(path << ": cases[" << i << "].run = \"" << nc.run << "\" is not first or second");
    if (!c.contains("seed") || !c["seed"].is_number_unsigned()) {
      FAIL(path << ": cases[" << i << "].seed = " << (c.contains("seed") ? c["seed"].dump() : "(missing)")
                << " is not an unsigned integer");
    }
    nc.seed = c["seed"].get<std::uint64_t>();
    nc.error_ratio = number("error_ratio");
    nc.error_norm = number("error_norm");
    out.push_back(std::move(nc));
  }
  return out;
}

Problem problem_of(const NumericsCase& c, const std::string& op, const std::string& where) {
  Problem p;
  p.op = op;
  auto dims = parse_dims(c.dims);
  if (!dims.ok()) FAIL(where << ".dims = \"" << c.dims << "\": " << dims.error().message);
  p.dims = *dims;
  auto dtype = parse_dtype(c.dtype);
  if (!dtype) FAIL(where << ".dtype = \"" << c.dtype << "\" is not a dtype");
  p.dtype = *dtype;
  auto layout = parse_layout(c.layout);
  if (!layout) FAIL(where << ".layout = \"" << c.layout << "\" is not a layout");
  p.layout = *layout;
  auto epilogue = parse_epilogue(c.epilogue);
  if (!epilogue.ok()) FAIL(where << ".epilogue = \"" << c.epilogue << "\": " << epilogue.error().message);
  p.epilogue = *epilogue;
  auto attrs = parse_attrs(c.attrs);
  if (!attrs.ok()) FAIL(where << ".attrs = \"" << c.attrs << "\": " << attrs.error().message);
  p.attrs = *attrs;
  return p;
}

/// Four significant digits, rounded up so that the recorded value is never
/// below the one measured.
std::string up4(double v) {
  if (v == 0.0) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  double r = std::strtod(buf, nullptr);
  if (r < v) {
    const double ulp4 = std::pow(10.0, std::floor(std::log10(v)) - 3);
    std::snprintf(buf, sizeof buf, "%.3e", r + ulp4);
  }
  return buf;
}

void write_cases(const std::string& path, const std::string& op, const std::vector<NumericsCase>& cases) {
  std::ofstream out(path);
  if (!out.good()) FAIL(path << ": cannot be written");
  out << "{\n  \"schema_version\": 1,\n  \"operator\": \"" << op << "\",\n"
      << "  \"note\": \"error_ratio and error_norm measured on PoCL; regenerate with KFORGE_UPDATE_NUMERICS=1 "
         "(docs/tolerances.md)\",\n  \"cases\": [\n";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const NumericsCase& c = cases[i];
    nlohmann::ordered_json j;
    j["template"] = c.tpl;
    j["config"] = c.config;
    j["dims"] = c.dims;
    j["dtype"] = c.dtype;
    if (c.layout != "NN") j["layout"] = c.layout;
    if (c.epilogue != "none") j["epilogue"] = c.epilogue;
    if (!c.attrs.empty()) j["attrs"] = c.attrs;
    j["seed"] = c.seed;
    j["run"] = c.run;
    std::string line = j.dump();
    line.pop_back();  // the closing brace: the numbers follow, formatted
    out << "    " << line << ", \"error_ratio\": " << up4(*c.error_ratio) << ", \"error_norm\": " << up4(*c.error_norm)
        << "}" << (i + 1 < cases.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
}

void check_operator(const std::string& op) {
  const std::string path = numerics_path(op);
  std::vector<NumericsCase> cases = load_cases(path, op);
  REQUIRE_FALSE(cases.empty());
  std::map<std::string, std::unique_ptr<test::CoverageRunner>> runners;  // one per template and configuration
  for (std::size_t i = 0; i < cases.size(); ++i) {
    NumericsCase& c = cases[i];
    const std::string where = path + ": cases[" + std::to_string(i) + "]";
    const Problem p = problem_of(c, op, where);
    auto& runner = runners[c.tpl + " " + c.config];
    if (!runner) runner = std::make_unique<test::CoverageRunner>(c.tpl, c.config);
    const WorkloadKind kind = c.run == "first" ? WorkloadKind::kPoisonedOutput : WorkloadKind::kAccumulate;
    const std::string failure = runner->run(p, kind, c.seed);
    if (!failure.empty() && failure.rfind("wrong result", 0) != 0) FAIL(where << ": " << failure);
    const double ratio = runner->last_validation().error_ratio, norm = runner->last_validation().error_norm;
    const std::string names = "template " + c.tpl + " config " + c.config + " problem " + p.key() + " dtype " +
                              c.dtype + " layout " + c.layout + " (" + c.run + " run, seed " +
                              std::to_string(c.seed) + ")";
    std::ostringstream measured;
    measured << "error_ratio " << ratio << " error_norm " << norm;
    if (update_mode()) {
      c.error_ratio = ratio;
      c.error_norm = norm;
      WARN("recorded " << names << ": " << measured.str());
      continue;
    }
    if (!c.error_ratio || !c.error_norm) {
      FAIL_CHECK(where << " (" << names << ") has no recorded error; measured " << measured.str()
                       << "; record it with KFORGE_UPDATE_NUMERICS=1");
      continue;
    }
    const double ratio_limit = std::max(kFactor * *c.error_ratio, *c.error_ratio + kRatioFloor);
    const double norm_limit = std::max(kFactor * *c.error_norm, *c.error_norm + kNormFloor);
    // Written so that NaN fails.
    if (!(ratio <= ratio_limit) || !(norm <= norm_limit)) {
      FAIL_CHECK("numerics regression: " << names << ": " << measured.str() << " exceeds the limit error_ratio "
                                         << ratio_limit << " error_norm " << norm_limit << " (recorded "
                                         << *c.error_ratio << " and " << *c.error_norm
                                         << "; margin max(2x, +" << kRatioFloor << " | +" << kNormFloor
                                         << "), docs/tolerances.md)"
                                         << (failure.empty() ? "" : "; " + failure)
                                         << "; rerun: tests/runtime/numerics_tests \"numerics: " << op
                                         << "*\" or " << rerun_command(p, c.tpl, c.config));
    }
  }
  if (update_mode()) write_cases(path, op, cases);
}

}  // namespace

TEST_CASE("numerics: gemm templates keep their recorded error", "[opencl][numerics]") { check_operator("gemm"); }
TEST_CASE("numerics: reduce templates keep their recorded error", "[opencl][numerics]") { check_operator("reduce"); }
TEST_CASE("numerics: softmax templates keep their recorded error", "[opencl][numerics]") { check_operator("softmax"); }
TEST_CASE("numerics: transpose templates keep their recorded error", "[opencl][numerics]") {
  check_operator("transpose");
}
TEST_CASE("numerics: layernorm templates keep their recorded error", "[opencl][numerics]") {
  check_operator("layernorm");
}
TEST_CASE("numerics: rmsnorm templates keep their recorded error", "[opencl][numerics]") { check_operator("rmsnorm"); }
TEST_CASE("numerics: attention templates keep their recorded error", "[opencl][numerics]") {
  check_operator("attention");
}

TEST_CASE("numerics: rope templates keep their recorded error", "[opencl][numerics]") { check_operator("rope"); }
TEST_CASE("numerics: swiglu templates keep their recorded error", "[opencl][numerics]") { check_operator("swiglu"); }

TEST_CASE("numerics: every built-in template has fixtures", "[opencl][numerics]") {
  // A new template must come with its cases (values recorded by KFORGE_UPDATE_NUMERICS=1).
  auto all = builtin_templates();
  REQUIRE(all.ok());
  for (const auto& t : *all) {
    if (std::find(t.manifest.targets.begin(), t.manifest.targets.end(), "opencl") == t.manifest.targets.end()) {
      continue;  // runs on PoCL only when it targets OpenCL
    }
    // A library's numbers are its own (they change with its version); every
    // tune validates them against the reference instead.
    if (t.manifest.is_library()) continue;
    std::ifstream in(numerics_path(t.manifest.op));
    if (!in.good()) {
      FAIL_CHECK(numerics_path(t.manifest.op) << " is missing (template " << t.manifest.name << ")");
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    CHECK_THAT(text.str(), Catch::Contains("\"template\":\"" + t.manifest.name + "\""));
  }
}
