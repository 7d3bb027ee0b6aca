// kforge capabilities on the fixture database and the fixture templates of
// tests/data/templates: targets, guards, fallbacks per dtype, evidence, and
// golden files for both outputs.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"
#include "tests/tools/golden.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

struct Setup {
  test::TempDir dir;
  std::string db = dir.file("base.db");
  std::string flags;
  Setup() {
    test::build_fixture_db(db, test::Fixture::kBase);
    flags = " --db " + db + " --template " + test::fixture_template_dir("fixture_gemm_mma") + " --template " +
            test::fixture_template_dir("fixture_gemm_portable") +
            " --only fixture_gemm_mma --only fixture_gemm_portable --target cuda:sm_75 --target hip:gfx908";
  }
};

const json& target(const json& model, const std::string& name) {
  for (const auto& t : model["targets"])
    if (t["target"] == name) return t;
  FAIL("no target " << name);
  throw std::logic_error("unreachable");
}

const json& gemm(const json& t) {
  REQUIRE(t["operators"].size() == 1);
  REQUIRE(t["operators"][0]["op"] == "gemm");
  return t["operators"][0];
}

std::vector<std::string> names(const json& arr) {
  std::vector<std::string> out;
  for (const auto& x : arr) out.push_back(x["name"]);
  return out;
}

}  // namespace

TEST_CASE("capabilities: targets come from the database, the guards and --target", "[capabilities]") {
  Setup s;
  auto r = test::run_kforge("capabilities --json" + s.flags);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json m = json::parse(r.out);
  std::vector<std::string> targets;
  for (const auto& t : m["targets"]) targets.push_back(t["target"]);
  CHECK(targets == std::vector<std::string>{"cuda:sm_75", "cuda:sm_80", "cuda:sm_90", "hip:gfx908", "hip:gfx90a",
                                            "hip:gfx942", "opencl:x86_64-haswell"});
  CHECK(target(m, "cuda:sm_90")["from"] == json::array({"database"}));
  CHECK(target(m, "cuda:sm_80")["from"] == json::array({"guard"}));
  CHECK(target(m, "hip:gfx942")["from"] == json::array({"database", "guard"}));
  CHECK(target(m, "cuda:sm_75")["from"] == json::array({"--target"}));
  CHECK(target(m, "cuda:sm_90")["devices"][0]["name"] == "NVIDIA H200");
}

TEST_CASE("capabilities: guards and fallbacks per target and dtype", "[capabilities]") {
  Setup s;
  const json m = json::parse(test::run_kforge("capabilities --json" + s.flags).out);

  // sm_75 fails sm_80+: the guarded template is out, the portable one is the
  // fallback for f16, and nothing covers bf16 there.
  const json& sm75 = gemm(target(m, "cuda:sm_75"));
  CHECK(names(sm75["templates"]) == std::vector<std::string>{"fixture_gemm_portable"});
  REQUIRE(sm75["guarded_out"].size() == 1);
  const json& out = sm75["guarded_out"][0];
  CHECK(out["name"] == "fixture_gemm_mma");
  CHECK(out["reason"] == "fixture_gemm_mma requires sm_80+ or gfx90a or gfx942 (device is sm_75)");
  CHECK(out["fallback"] == json::parse(R"([{"dtype":"f16","templates":["fixture_gemm_portable"]},
                                           {"dtype":"bf16","templates":[]}])"));

  // sm_80 and sm_90 pass the guard; gfx942 and gfx90a pass, gfx908 does not.
  for (const char* t : {"cuda:sm_80", "cuda:sm_90", "hip:gfx90a", "hip:gfx942"}) {
    INFO(t);
    CHECK(names(gemm(target(m, t))["templates"]) ==
          std::vector<std::string>{"fixture_gemm_mma", "fixture_gemm_portable"});
    CHECK(gemm(target(m, t))["guarded_out"].empty());
  }
  const json& gfx908 = gemm(target(m, "hip:gfx908"));
  REQUIRE(gfx908["guarded_out"].size() == 1);
  CHECK(gfx908["guarded_out"][0]["reason"] == "fixture_gemm_mma requires sm_80+ or gfx90a or gfx942 (device is gfx908)");

  // OpenCL: the guarded template does not build there at all.
  const json& ocl = gemm(target(m, "opencl:x86_64-haswell"));
  CHECK(names(ocl["templates"]) == std::vector<std::string>{"fixture_gemm_portable"});
  CHECK(ocl["guarded_out"].empty());
  CHECK(ocl["other_backends"][0]["name"] == "fixture_gemm_mma");
  CHECK(ocl["other_backends"][0]["targets"] == json::array({"cuda", "hip"}));

  // Supported dtypes, layouts and envelope come from the manifest.
  const json& mma = gemm(target(m, "cuda:sm_90"))["templates"][0];
  CHECK(mma["dtypes"] == json::array({"f16", "bf16"}));
  CHECK(mma["layouts"] == json::array({"NN", "NT"}));
  CHECK(mma["envelope"] == json::array({"K % 16 == 0", "M % 8 == 0"}));
  CHECK(mma["guard"] == json::array({"sm_80+", "gfx90a", "gfx942"}));
}

TEST_CASE("capabilities: evidence of tuning and validation from the database", "[capabilities]") {
  Setup s;
  const json m = json::parse(test::run_kforge("capabilities --json" + s.flags).out);
  const json& mma = gemm(target(m, "cuda:sm_90"))["templates"][0];
  REQUIRE(mma["evidence"].size() == 1);
  const json& e = mma["evidence"][0];
  CHECK(e["state"] == "current");
  CHECK(e["template_hash"] == test::current_hash("fixture_gemm_mma", "cuda"));
  CHECK(e["devices"] == json::array({"NVIDIA H200"}));
  CHECK(e["problems"] == 1);
  CHECK(e["results"] == 12);
  CHECK(e["validated"] == 8);
  CHECK(e["failed"] == json::parse(R"({"compile_error":1,"resource_limit":1,"timeout":1,"wrong_result":1})"));
  CHECK(e["first_tuned"] == "2024-05-01T12:24:00Z");
  CHECK(e["dims"]["K"] == json::array({1024, 1024}));
  // Not tuned on sm_80 (no such device in the database).
  CHECK(gemm(target(m, "cuda:sm_80"))["templates"][0]["evidence"].empty());

  // A template tuned under an old hash shows that version as stale.
  auto simt = test::run_kforge("capabilities --json --only gemm_simt_tiled --db " + s.db);
  REQUIRE(simt.exit_code == 0);
  const json ms = json::parse(simt.out);
  const json& ev = gemm(target(ms, "opencl:x86_64-haswell"))["templates"][0]["evidence"];
  REQUIRE(ev.size() == 2);
  CHECK(ev[0]["state"] == "current");
  CHECK(ev[1]["state"] == "stale");
  CHECK(ev[1]["template_hash"] == test::kStaleHash);
}

TEST_CASE("capabilities: each version's measured regime, from counters or the model", "[capabilities][counters]") {
  Setup s;
  // Without counters: the model's bytes and flops against the datasheet, said to be the model's.
  json m = json::parse(test::run_kforge("capabilities --json" + s.flags).out);
  json regime = gemm(target(m, "cuda:sm_90"))["templates"][0]["evidence"][0]["regime"];
  REQUIRE(regime.size() == 1);
  CHECK(regime[0]["bound"] == "latency/occupancy-bound");
  CHECK(regime[0]["from_model"] == true);

  // ncu's tensor pipe at 71%: compute-bound, no longer from the model.
  test::store_winner_counters(s.db, "fixture-h200", "gemm/K=1024,M=1024,N=1024,batch=1/f16/NT",
                              {{"dram__bytes_read.sum", 12e6},
                               {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 71.4}});
  m = json::parse(test::run_kforge("capabilities --json" + s.flags).out);
  regime = gemm(target(m, "cuda:sm_90"))["templates"][0]["evidence"][0]["regime"];
  REQUIRE(regime.size() == 1);
  CHECK(regime[0]["bound"] == "compute-bound");
  CHECK(regime[0]["first"].get<double>() == Approx(0.714));
  CHECK(regime[0]["from_model"] == false);
  const auto md = test::run_kforge("capabilities" + s.flags);
  CHECK(md.out.find("regime: compute-bound on 1 of 1 winner (0.71 tensor pipe busy)") != std::string::npos);

  // A ceilings file is used for the fractions; a bad one is an error naming it.
  const std::string ceilings = s.dir.file("peaks.json");
  test::write_file(ceilings, R"([{"match": "MI300X", "bandwidth_gbs": 1, "fp32_gflops": 1e9, "source": "tiny"}])");
  m = json::parse(test::run_kforge("capabilities --json --ceilings " + ceilings + s.flags).out);
  regime = gemm(target(m, "hip:gfx942"))["templates"][1]["evidence"][0]["regime"];
  REQUIRE(regime.size() == 1);
  CHECK(regime[0]["bound"] == "memory-bound");
  CHECK(regime[0]["text"].get<std::string>().find("of memory bandwidth (tiny)") != std::string::npos);
  test::write_file(ceilings, "[{]");
  const auto bad = test::run_kforge("capabilities --ceilings " + ceilings + s.flags);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("peaks.json") != std::string::npos);
}

TEST_CASE("capabilities: golden Markdown and JSON", "[capabilities]") {
  Setup s;
  auto md = test::run_kforge("capabilities" + s.flags);
  REQUIRE(md.exit_code == 0);
  test::check_golden("capabilities.md", md.out);
  auto js = test::run_kforge("capabilities --json" + s.flags);
  REQUIRE(js.exit_code == 0);
  test::check_golden("capabilities.json", js.out);
}

TEST_CASE("capabilities: bad targets and template names are one-line errors", "[capabilities]") {
  auto r = test::run_kforge("capabilities --no-db --target vulkan:x");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kforge: error: --target: unknown backend in 'vulkan:x' (cuda:sm_NN, hip:gfxNNN, opencl[:ARCH])\n");
  r = test::run_kforge("capabilities --no-db --target cuda:gfx90a");
  CHECK(r.exit_code == 2);
  r = test::run_kforge("capabilities --no-db --only no_such_template");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no template named 'no_such_template'") != std::string::npos);
}
