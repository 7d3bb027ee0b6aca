// Counters from the command line on PoCL: every tuned winner gets its
// counters rows (the CPU's perf availability and the operator's model),
// `show` presents them with a bound verdict, and the profile-launch mode
// launches one configuration in a process of its own.
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "tests/tools/cli_util.hpp"
#include "tuner/worker/worker_protocol.hpp"

using namespace kforge;

namespace {

const char* kTune =
    "tune --shape M=64,N=64,K=64 --only-template gemm_simt_tiled --max-evals 2 --min-reps 2 --max-reps 2 "
    "--quiet --json --db ";

/// The collection of `collector` in a list of collections, or null.
const nlohmann::json* collection(const nlohmann::json& list, const std::string& collector) {
  for (const auto& c : list) {
    if (c.value("collector", "") == collector) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("kforge ceilings measures the device's peaks and show places the winner against them",
          "[cli][counters][ceilings]") {
  test::TempDir dir;
  const std::string db = dir.file("k.db");
  REQUIRE(test::run_kforge(kTune + db).exit_code == 0);
  auto r = test::run_kforge("show --json --db " + db);
  REQUIRE(r.exit_code == 0);
  // No datasheet entry for this CPU: the bound has no fraction to stand on.
  CHECK(nlohmann::json::parse(r.out)["winners"][0]["bound"]["text"].get<std::string>().find("measured") ==
        std::string::npos);

  r = test::run_kforge("ceilings --copy-mib 8 --repetitions 3 --json --db " + db);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto peaks = nlohmann::json::parse(r.out);
  CHECK(peaks["copy_bandwidth"]["value"].get<double>() > 0);
  CHECK(peaks["copy_bandwidth"]["unit"] == "GB/s");
  CHECK(peaks["copy_bandwidth"]["method"].get<std::string>().find("float4 copy of 2 x 8 MiB") == 0);
  CHECK(peaks["fp32_fma"]["value"].get<double>() > 0);
  CHECK(peaks["fp32_fma"]["method"].get<std::string>().find("8 FMA chains x ") == 0);

  r = test::run_kforge("show --json --db " + db);
  REQUIRE(r.exit_code == 0);
  const auto bound = nlohmann::json::parse(r.out)["winners"][0]["bound"];
  INFO(bound.dump());
  CHECK(bound["from_model"] == true);
  if (bound["bound"] != "launch-bound") {  // a launch under 10 us is that, whatever the ceilings
    CHECK(bound["bound"] != "unknown");
    CHECK(bound["text"].get<std::string>().find("measured copy bandwidth") != std::string::npos);
  }
  // The text table names both.
  r = test::run_kforge("ceilings --copy-mib 8 --repetitions 3 --db " + db);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("copy bandwidth") != std::string::npos);
  CHECK(r.out.find("GFLOP/s") != std::string::npos);
}

TEST_CASE("a tuned winner carries its counters rows and show gives its bound", "[cli][counters]") {
  test::TempDir dir;
  const std::string db = dir.file("k.db");
  auto r = test::run_kforge(kTune + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto tuned = nlohmann::json::parse(r.out);
  REQUIRE(tuned["profiled"].size() >= 1);
  const auto& winner = tuned["profiled"][0];
  CHECK(winner["role"] == "winner");
  const auto* perf = collection(winner["counters"], "perf");
  REQUIRE(perf);
  // This kforge ran without --profile: perf says why it read nothing.
  CHECK((*perf)["unavailable"].get<std::string>().rfind("unavailable: ", 0) == 0);
  REQUIRE(collection(winner["counters"], "model"));

  r = test::run_kforge("show --results --json --db " + db);
  REQUIRE(r.exit_code == 0);
  const auto shown = nlohmann::json::parse(r.out);
  const auto& w = shown["winners"][0];
  REQUIRE(w.contains("counters"));
  CHECK(collection(w["counters"], "perf"));
  // No ceilings are known for this CPU: no fraction, so unknown (or launch-bound if it ran under 10 us).
  CHECK((w["bound"]["bound"] == "unknown" || w["bound"]["bound"] == "launch-bound"));
  CHECK(w["bound"]["from_model"] == true);
  CHECK(w["bound"]["text"].get<std::string>().find("(from the model, not counters)") != std::string::npos);

  // With ceilings for this CPU the model's bytes and flops give a class.
  test::write_file(dir.file("ceil.json"), R"([{"match": )" + shown["devices"][0]["name"].dump() +
                                              R"(, "fp32_gflops": 0.001, "bandwidth_gbs": 0.001}])");
  r = test::run_kforge("show --results --db " + db + " --ceilings " + dir.file("ceil.json"));
  REQUIRE(r.exit_code == 0);
  INFO(r.out);
  CHECK(r.out.find("what bounds each winner") != std::string::npos);
  CHECK(r.out.find("(from the model, not counters)") != std::string::npos);
  CHECK(r.out.find("perf: unavailable: ") != std::string::npos);
  CHECK(r.out.find("-bound") != std::string::npos);

  r = test::run_kforge("db verify --db " + db);
  INFO(r.out);
  CHECK(r.exit_code == 0);
}

TEST_CASE("the profile-launch mode validates and launches one configuration", "[cli][counters]") {
  test::TempDir dir;
  const std::string db = dir.file("k.db");
  auto r = test::run_kforge(kTune + db);
  REQUIRE(r.exit_code == 0);
  const std::string config = nlohmann::json::parse(r.out)["winner"]["config"];

  RunnerSetup s;
  s.device_selector = "opencl:0";
  s.problem.op = "gemm";
  s.problem.dims = {{"M", 64}, {"N", 64}, {"K", 64}, {"batch", 1}};
  s.problem.dtype = Dtype::kF32;
  s.problem.layout = *parse_layout("NN");
  s.template_origins = {"builtin:gemm/simt_tiled"};
  s.workload_seed = 1;
  test::write_file(dir.file("setup.json"), to_json(s).dump());

  r = test::run_kforge("__profile-launch " + dir.file("setup.json") + " gemm_simt_tiled " + config + " perf");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("kforge-profile: ");
  REQUIRE(at != std::string::npos);
  const auto line = nlohmann::json::parse(r.out.substr(at + 16));
  CHECK(line["status"] == "ok");
  const auto& perf = line["perf"];
  if (perf["unavailable"].get<std::string>().empty()) {
    CHECK(perf["readings"].size() == 6);
  } else {
    CHECK(perf["unavailable"].get<std::string>().find("perf_event_open: ") != std::string::npos);
  }

  r = test::run_kforge("__profile-launch " + dir.file("setup.json") + " gemm_simt_tiled NOT_A_CONFIG perf");
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("kforge-profile: {\"error\"") != std::string::npos);
}

TEST_CASE("counters survive export and import into a fresh database", "[cli][counters][import]") {
  test::TempDir dir;
  const std::string db = dir.file("k.db");
  auto r = test::run_kforge(kTune + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = test::run_kforge("export --all-results --out " + dir.file("x.json") + " --db " + db);
  REQUIRE(r.exit_code == 0);
  const auto exported = nlohmann::json::parse(test::read_file(dir.file("x.json")));
  r = test::run_kforge("import --json " + dir.file("x.json") + " --db " + dir.file("fresh.db"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto counts = nlohmann::json::parse(r.out);
  CHECK(counts["counters_added"].get<int>() > 0);
  r = test::run_kforge("export --all-results --db " + dir.file("fresh.db"));
  REQUIRE(r.exit_code == 0);
  const auto again = nlohmann::json::parse(r.out);
  // Each result's counters re-attach to the same result, every field kept.
  std::map<std::string, nlohmann::json> before, after;
  std::size_t rows = 0;
  for (const auto& x : exported["results"]) {
    before[x["config"].get<std::string>()] = x["counters"];
    rows += x["counters"].size();
  }
  for (const auto& x : again["results"]) after[x["config"].get<std::string>()] = x["counters"];
  CHECK(counts["counters_added"] == rows);
  CHECK(after == before);
  bool perf_row = false;
  for (const auto& [config, list] : after)
    for (const auto& c : list) perf_row = perf_row || c["collector"] == "perf";
  CHECK(perf_row);

  // A second import keeps the stored rows.
  r = test::run_kforge("import --json " + dir.file("x.json") + " --db " + dir.file("fresh.db"));
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["counters_added"] == 0);
  CHECK(nlohmann::json::parse(r.out)["counters_present"] == rows);
}
