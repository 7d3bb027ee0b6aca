// Library candidates from the command line: tuned beside the kernels,
// compared in show, forbidden or forced by flag, unavailable when missing.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using json = nlohmann::json;

namespace {

const std::string kTune =
    "tune --op gemm --shape M=32,N=32,K=32 --dtype f32 --max-evals 4 --min-reps 2 --max-reps 2 "
    "--quiet --json --db ";

json parse(const kforge::test::CommandResult& r) {
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("tune includes CLBlast and show compares kforge's best with it", "[cli][library]") {
  kforge::test::TempDir dir;
  const std::string db = dir.file("t.db");
  const json t = parse(kforge::test::run_kforge(kTune + db + " --library compare"));
  CHECK(t["skipped_templates"].empty());
  const json s = parse(kforge::test::run_kforge("show --json --db " + db));
  REQUIRE(s["vendor_comparison"].size() == 1);
  const json& v = s["vendor_comparison"][0];
  CHECK(v["library_best"]["template"] == "gemm_clblast");
  CHECK(v["kernel_best"]["template"] == "gemm_simt_tiled");
  CHECK(v["kernel_over_library"].get<double>() > 0);
  const auto text = kforge::test::run_kforge("show --db " + db);
  CHECK_THAT(text.out, Catch::Contains("kforge vs vendor library"));
  const json look =
      parse(kforge::test::run_kforge("lookup --op gemm --shape M=32,N=32,K=32 --json --db " + db));
  CHECK(look["vendor_comparison"]["library_best"].get<std::string>().rfind("gemm_clblast", 0) == 0);
  const json forced = parse(
      kforge::test::run_kforge("lookup --op gemm --shape M=32,N=32,K=32 --json --library force --db " + db));
  CHECK(forced["template"] == "gemm_clblast");
}

TEST_CASE("tune --library force tunes the library alone, forbid the kernels alone", "[cli][library]") {
  kforge::test::TempDir dir;
  for (const char* policy : {"force", "forbid"}) {
    const json t = parse(kforge::test::run_kforge(kTune + dir.file(policy) + " --library " + policy));
    const bool force = std::string(policy) == "force";
    CHECK(t["winner"]["template"] == (force ? "gemm_clblast" : "gemm_simt_tiled"));
    const json s = parse(kforge::test::run_kforge("show --results --json --db " + dir.file(policy)));
    REQUIRE_FALSE(s["results"].empty());
    for (const auto& r : s["results"]) {
      INFO(r.dump());
      CHECK((r["template"] == "gemm_clblast") == force);
    }
  }
  const auto bad = kforge::test::run_kforge("tune --library sometimes --db " + dir.file("x.db"));
  CHECK(bad.exit_code == 2);
}

TEST_CASE("a missing CLBlast is a skipped template with the reason, not an error", "[cli][library]") {
  kforge::test::TempDir dir;
  kforge::test::ScopedEnv missing("KFORGE_CLBLAST_LIBRARY", "/nonexistent/libclblast.so.1");
  const json t = parse(kforge::test::run_kforge(kTune + dir.file("t.db")));
  REQUIRE(t["skipped_templates"].size() == 1);
  CHECK(t["skipped_templates"][0]["template"] == "gemm_clblast");
  CHECK_THAT(t["skipped_templates"][0]["reason"].get<std::string>(),
             Catch::Contains("unavailable") && Catch::Contains("/nonexistent/libclblast.so.1"));
}

TEST_CASE("kforge templates lists each vendor library with its identity or why it is unavailable",
          "[cli][library]") {
  kforge::test::ScopedEnv lt("KFORGE_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13");
  kforge::test::ScopedEnv hl("KFORGE_HIPBLASLT_LIBRARY", "/nonexistent/libhipblaslt.so.0");
  const json all = parse(kforge::test::run_kforge("templates --json"));
  std::map<std::string, json> by_name;
  for (const auto& t : all) by_name[t["name"].get<std::string>()] = t;
  REQUIRE(by_name.count("gemm_cublaslt") == 1);
  REQUIRE(by_name.count("gemm_hipblaslt") == 1);
  CHECK(by_name["gemm_cublaslt"]["library"] == "cublaslt");
  CHECK_THAT(by_name["gemm_cublaslt"]["library_unavailable"].get<std::string>(),
             Catch::Contains("/nonexistent/libcublasLt.so.13"));
  CHECK_THAT(by_name["gemm_hipblaslt"]["library_unavailable"].get<std::string>(),
             Catch::Contains("/nonexistent/libhipblaslt.so.0"));
  CHECK(by_name["gemm_clblast"]["library_identity"].get<std::string>().rfind("clblast ", 0) == 0);
  CHECK_FALSE(by_name["gemm_simt_tiled"].contains("library"));
  const auto text = kforge::test::run_kforge("templates");
  CHECK_THAT(text.out, Catch::Contains("vendor libraries:") &&
                           Catch::Contains("  gemm_cublaslt: unavailable: cuBLASLt"));
}

TEST_CASE("a tune on PoCL never runs the CUDA and HIP library templates", "[cli][library]") {
  kforge::test::TempDir dir;
  const json t = parse(kforge::test::run_kforge(kTune + dir.file("t.db") + " --library force"));
  const json s = parse(kforge::test::run_kforge("show --results --json --db " + dir.file("t.db")));
  REQUIRE_FALSE(s["results"].empty());
  for (const auto& r : s["results"]) CHECK(r["template"] == "gemm_clblast");
  for (const auto& skipped : t["skipped_templates"]) CHECK(skipped["template"] == "gemm_clblast");
}
