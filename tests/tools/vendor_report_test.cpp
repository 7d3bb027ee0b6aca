// report, compare and capabilities on a database where CLBlast was tuned
// beside a kernel: per tuned problem, kforge's best against the library's
// best and their ratio, computed by vendor_comparison.hpp for all three.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report/capabilities.hpp"
#include "report/report_renderer.hpp"
#include "report/set_comparison.hpp"
#include "report/tuning_facts.hpp"
#include "report/vendor_comparison.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/test_util.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;
using namespace kforge::report;

namespace {

std::string builtin_manifest(const std::string& name) {
  auto all = builtin_templates();
  REQUIRE(all.ok());
  for (const auto& t : *all)
    if (t.manifest.name == name) return t.manifest_text;
  FAIL("no built-in template " << name);
  return "";
}

/// One PoCL device; gemm at 256^3 (CLBlast 0.61 ms against the kernel's
/// 0.80 ms: the library faster) and 512^3 (5.0 against 4.0: the kernel).
void build_vendor_db(const std::string& path) {
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  DeviceRecord d{
      0, "fixture-pocl", "opencl", "GenuineIntel", "cpu-fixture", "x86_64", R"({"name":"cpu-fixture"})"};
  const std::int64_t dev = db->put_device(d).value();
  const std::int64_t kernel = db->put_template({0, "gemm_simt_tiled", "gemm", "5171000000000000",
                                                test::fixture_manifest("gemm_simt_tiled", R"(["opencl"])")})
                                  .value();
  const std::int64_t library =
      db->put_template({0, "gemm_clblast", "gemm", "c1b1a57000000000", builtin_manifest("gemm_clblast")})
          .value();
  SweepRecord sweep;
  sweep.tool_version = "0.1.0";
  sweep.started_at = "2024-06-02T09:00:00Z";
  const std::int64_t sweep_id = db->begin_sweep(sweep).value();
  std::uint64_t seed = 1;
  auto result = [&](std::int64_t tpl, std::int64_t problem, const std::string& config, double ms) {
    ResultRecord r;
    r.sweep_id = sweep_id, r.device_id = dev, r.template_id = tpl, r.problem_id = problem;
    r.config = config;
    r.status = "ok";
    test::set_timing(r, ms, seed++);
    r.created_at = "2024-06-02T09:10:00Z";
    db->add_result(r).value();
  };
  for (const auto& [n, kernel_ms, library_ms] : {std::tuple{256, 0.80, 0.61}, std::tuple{512, 4.0, 5.0}}) {
    ProblemRecord p;
    const std::string dims = "K=" + std::to_string(n) + ",M=" + std::to_string(n) + ",N=" + std::to_string(n);
    p.key = "gemm/" + dims + ",batch=1/f32/NN";
    p.op = "gemm";
    p.dims_json = nlohmann::json{{"K", n}, {"M", n}, {"N", n}, {"batch", 1}}.dump();
    p.dtype = "f32";
    p.layout = "NN";
    const std::int64_t problem = db->put_problem(p).value();
    result(kernel, problem, "BM64_BN64_TM4", kernel_ms);
    result(kernel, problem, "BM32_BN32_TM2", kernel_ms * 1.5);
    result(library, problem, "BATCHED0", library_ms);
  }
  db->finish_sweep(sweep_id, "2024-06-02T10:00:00Z").value();
}

struct VendorFixture {
  test::TempDir dir;
  std::string path = dir.file("vendor.db");
  TuningSet set;
  VendorFixture() {
    build_vendor_db(path);
    TuningFilter all;
    all.all_results = true;
    set = load_tuning_set(path, all).value();
  }
};

}  // namespace

TEST_CASE("a tuning set tells library winners from kernels by their stored manifest", "[vendor][tools]") {
  VendorFixture f;
  const auto rows = with_library(compare_vendor(f.set));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].problem_key == "gemm/K=256,M=256,N=256,batch=1/f32/NN");
  CHECK(rows[0].library.template_name == "gemm_clblast");
  CHECK(rows[0].kernel.config == "BM64_BN64_TM4");
  CHECK(rows[0].faster == "library");
  CHECK(rows[0].ratio == Approx(rows[0].kernel.median_ms / rows[0].library.median_ms));
  CHECK(rows[0].ratio > 1.2);
  CHECK(rows[1].faster == "kernel");
  CHECK(rows[1].ratio < 0.9);
}

TEST_CASE("kforge report has a table of kforge's best against the library's", "[vendor][tools]") {
  VendorFixture f;
  const std::string html = report::render_report_html(f.set, {});
  CHECK_THAT(html, Catch::Contains("kforge against the vendor library"));
  CHECK_THAT(html, Catch::Contains("gemm_clblast BATCHED0"));
  CHECK_THAT(html, Catch::Contains("gemm_simt_tiled BM64_BN64_TM4"));
  const auto rows = with_library(compare_vendor(f.set));
  CHECK_THAT(
      html, Catch::Contains("<td class=\"num\">" + report::short_number(rows[0].ratio, 3) + "</td><td>library"));
}

TEST_CASE("kforge compare lists each set's kforge-against-library rows", "[vendor][tools]") {
  VendorFixture f;
  const report::Comparison c = report::compare_sets(f.set, f.set);
  REQUIRE(c.vendor.size() == 4);
  CHECK(c.vendor[0].side == "base");
  CHECK(c.vendor[2].side == "new");
  CHECK(c.vendor[0].device_name == "cpu-fixture");
  const std::string md = report::render_comparison_markdown(c);
  CHECK_THAT(md, Catch::Contains("## kforge against the vendor library"));
  CHECK_THAT(
      md, Catch::Contains("| new | cpu-fixture | gemm/K=512,M=512,N=512,batch=1/f32/NN | gemm_simt_tiled"));
  const nlohmann::json j = report::comparison_json(c);
  REQUIRE(j.contains("vendor_comparison"));
  CHECK(j["vendor_comparison"]["new"].size() == 2);
  CHECK(j["vendor_comparison"]["base"][0]["faster"] == "library");
}

TEST_CASE("kforge capabilities gives the evidence's kforge-against-library rows", "[vendor][tools]") {
  VendorFixture f;
  const TemplateCatalog catalog = TemplateCatalog::builtin().value();
  report::CapabilitiesRequest req;
  req.catalog = &catalog;
  req.op = "gemm";
  req.evidence = &f.set;
  req.evidence_source = "vendor.db";
  const auto model = report::describe_capabilities(req).value();
  REQUIRE(model.contains("vendor_comparison"));
  REQUIRE(model["vendor_comparison"].size() == 2);
  CHECK(model["vendor_comparison"][0]["device"] == "cpu-fixture");
  CHECK(model["vendor_comparison"][0]["library_best"]["template"] == "gemm_clblast");
  const std::string md = report::render_capabilities_markdown(model);
  CHECK_THAT(md, Catch::Contains("## kforge against the vendor library") && Catch::Contains("| kernel |"));
}
