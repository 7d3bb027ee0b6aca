// `kforge tune` on a real CUDA GPU, through the supervised worker: the planted
// faulty candidates (tests/data/templates/gemm_faulty) end with the right
// status, a sticky device error included, and a tuning run samples NVML clocks
// after every timed launch and compiles ahead while it measures, and ncu's
// counters put a memory-bound and a compute-bound winner on their sides of the
// bound verdict (docs/profiling.md). Without a
// CUDA device each test prints "SKIPPED: <why>", which ctest reports as skipped.
#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/device_registry.hpp"
#include "tests/faulty_template.hpp"
#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

bool cuda_present_or_skip() {
  if (!list_cuda_devices().empty()) return true;
  const std::string why = cuda_unavailable_reason();
  WARN("SKIPPED: no CUDA device: " << (why.empty() ? "the driver reports none" : why));
  return false;
}

json parse_json(const test::CommandResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

std::map<std::string, json> results_by_config(const std::string& db) {
  const json show = parse_json(test::run_kforge("show --results --json --db " + db));
  std::map<std::string, json> out;
  for (const auto& r : show["results"]) out.emplace(r["config"].get<std::string>(), r);
  return out;
}

}  // namespace

TEST_CASE("isolation on a CUDA GPU: a sticky device error, a hang and the other planted faults each get their status",
          "[gpu][isolation]") {
  if (!cuda_present_or_skip()) return;
  test::TempDir tmp;
  const std::string db = tmp.file("faulty.db");
  const json j = parse_json(test::run_kforge(
      "tune --device cuda:0 --template " + test::kFaulty + " --shape M=24,N=20,K=8 --strategy exhaustive --launch-timeout 8 --min-reps 2 "
      "--max-reps 3 --no-cache --quiet --json --db " + db));
  CHECK(j["evaluated"] == 14);
  CHECK(j["compile_overlap"] == true);  // auto: on for a GPU
  CHECK(j["code_generators"] == 0);     // PoCL's alone
  // Two sticky errors and two hangs each cost one worker. The first of them
  // ends the worker while compiles run ahead, so that candidate is evaluated
  // again alone (one worker more) and compiling ahead stops for the run.
  // Each new worker reads both validation references the first one wrote.
  CHECK(j["worker_restarts"] == 5);
  CHECK(j["references_reused"] == 10);
  CHECK(j["compile_ahead_stopped"].is_string());
  REQUIRE(j["winner"].is_object());
  CHECK_THAT(j["winner"]["config"].get<std::string>(), Catch::Contains("FLAW0"));

  const auto rows = results_by_config(db);
  REQUIRE(rows.size() == 14);
  for (int bx : {8, 16}) {
    for (const auto& [flaw, status] : test::kFaultyStatus) {
      const std::string config = test::faulty_config(bx, flaw);
      INFO(config);
      REQUIRE(rows.count(config) == 1);
      const json& r = rows.at(config);
      INFO(r.dump());
      CHECK(r["status"] == status);
      const std::string reason = r.value("reason", "");
      if (status == "crash") CHECK_THAT(reason, Catch::Contains("sticky device error") && Catch::Contains(config));
      if (status == "timeout") CHECK_THAT(reason, Catch::Contains("launch phase") && Catch::Contains(config));
      if (flaw == 5) CHECK_THAT(reason, Catch::Contains("nan", Catch::CaseSensitive::No));
    }
  }
}

TEST_CASE("a CUDA tuning run records NVML clocks with every timed sample", "[gpu][clocks]") {
  if (!cuda_present_or_skip()) return;
  test::TempDir tmp;
  const std::string db = tmp.file("clocks.db");
  const json t = parse_json(test::run_kforge("tune --device cuda:0 --op gemm --shape M=1024,N=1024,K=1024 --max-evals 6 "
                                             "--quiet --json --db " + db + " --cache-dir " + tmp.file("cache")));
  CHECK(t["compile_overlap"] == true);
  REQUIRE(t["winner"].is_object());
  std::size_t checked = 0;
  for (const auto& [config, r] : results_by_config(db)) {
    // Pruned before launch (spills on this architecture) is the only other outcome.
    if (r["status"] != "ok") {
      CHECK(r["status"] == "resource_limit");
      continue;
    }
    INFO(config << ": " << r["clocks"].dump());
    const json& c = r["clocks"];
    REQUIRE(c.is_object());
    CHECK(c["source"] == "nvml");
    REQUIRE(c["core_mhz"].size() == r["count"].get<std::size_t>());
    CHECK(c["throttled"].size() == r["count"].get<std::size_t>());
    for (const auto& mhz : c["core_mhz"]) CHECK(mhz.get<double>() > 100);
    CHECK(c["summary"]["reasons_known"] == true);
    CHECK(c["summary"]["memory_mhz_max"].get<double>() > 100);
    ++checked;
  }
  CHECK(checked >= 1);
}

TEST_CASE("every CUDA candidate keeps its ptxas report, also when another process compiled it before",
          "[gpu][nvrtc]") {
  if (!cuda_present_or_skip()) return;
  test::TempDir tmp;
  // Two runs over the same candidates, each with its own binary cache: the
  // second compiles what the first did (NVRTC 12.9+ would answer it from its
  // own cache, without a report, unless told not to).
  for (int run = 0; run < 2; ++run) {
    const std::string tag = std::to_string(run);
    const std::string db = tmp.file("r" + tag + ".db");
    const std::string cache = tmp.file("cache" + tag);
    (void)parse_json(test::run_kforge("tune --device cuda:0 --op gemm --shape M=512,N=512,K=512 --max-evals 4 "
                                      "--strategy random --seed 3 --quiet --json --db " + db + " --cache-dir " +
                                      cache));
    auto opened = Database::open(db, Database::Mode::kReadOnly);
    REQUIRE(opened.ok());
    auto rows = (*opened)->results();
    REQUIRE(rows.ok());
    REQUIRE_FALSE(rows->empty());
    for (const auto& r : *rows) {
      INFO("run " << run << " " << r.config << ": " << r.status << " " << r.resources_json);
      const json res = json::parse(r.resources_json);
      CHECK(res.value("registers", -1) > 0);
      CHECK(res.value("spill_stores", -1) >= 0);
      CHECK_THAT(r.compile_log, Catch::Contains("Used"));
    }
  }
}

TEST_CASE("counters on a CUDA GPU put a memory-bound and a compute-bound winner on their sides", "[gpu][counters]") {
  if (!cuda_present_or_skip()) return;
  if (std::system("command -v ncu >/dev/null 2>&1") != 0) {
    WARN("SKIPPED: ncu not found on PATH: no counters to read");
    return;
  }
  test::TempDir tmp;
  const std::string db = tmp.file("profiled.db");
  const char* common = " --device cuda:0 --max-evals 4 --min-reps 3 --max-reps 5 --quiet --json --profile --db ";
  parse_json(test::run_kforge("tune --op rmsnorm --shape rows=8192,cols=8192" + std::string(common) + db));
  parse_json(test::run_kforge("tune --op gemm --dtype bf16 --shape M=4096,N=4096,K=4096" + std::string(common) + db));
  const json show = parse_json(test::run_kforge("show --json --db " + db));
  std::map<std::string, std::string> bound_of;  // operator -> verdict of its fastest winner
  for (const auto& w : show["winners"]) {
    const std::string op = w["problem"].get<std::string>().substr(0, w["problem"].get<std::string>().find('/'));
    INFO(w.dump());
    REQUIRE(w.contains("bound"));
    CHECK(w["bound"]["from_model"] == false);
    if (!bound_of.count(op)) bound_of[op] = w["bound"]["bound"];
  }
  CHECK(bound_of["rmsnorm"] == "memory-bound");
  CHECK(bound_of["gemm"] == "compute-bound");
}
