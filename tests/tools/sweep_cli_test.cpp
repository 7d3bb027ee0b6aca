// `kforge sweep` end to end on PoCL: two shards merged equal an unsharded
// sweep, a finished sweep's rerun adds nothing, and a sweep killed with
// SIGKILL at a random point and resumed ends with an uninterrupted sweep's
// results, none lost or duplicated.
#include <catch2/catch.hpp>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <set>
#include <vector>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

extern char** environ;

using namespace kforge;

namespace {

/// Three small problems, two or three candidates each, timed twice.
const char* kPlan = R"({
  "schema_version": 1,
  "budget": {"strategy": "random", "max_evals": 2, "seed": 11, "min_reps": 2, "max_reps": 2},
  "entries": [
    {"op": "gemm", "shapes": ["M=24,N=16,K=8"], "budget": {"max_evals": 3}},
    {"op": "softmax", "shapes": ["rows=3,cols=40"]},
    {"op": "layernorm", "shapes": ["rows=2,cols=24"]}
  ]})";
constexpr std::size_t kRows = 3 + 2 + 2;

using Row = std::tuple<std::string, std::string, std::string, std::string>;  // problem, template, hash, config

struct Stored {
  std::multiset<Row> rows;  ///< a multiset, so a duplicate shows
  long finished_sweeps = 0;
};

Stored stored(const std::string& path) {
  Stored out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return out;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT p.key, t.name, t.hash, r.config FROM results r JOIN problems p ON p.id = r.problem_id "
      "JOIN templates t ON t.id = r.template_id";
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK) {
    auto text = [&](int i) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i))); };
    while (sqlite3_step(st) == SQLITE_ROW) out.rows.insert({text(0), text(1), text(2), text(3)});
  }
  sqlite3_finalize(st);
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sweeps WHERE finished_at <> ''", -1, &st, nullptr) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    out.finished_sweeps = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

/// The first column of every row `sql` returns from the database at `path`.
std::vector<std::string> column(const std::string& path, const std::string& sql) {
  std::vector<std::string> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK) {
      while (sqlite3_step(st) == SQLITE_ROW) out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

std::set<std::string> problems_of(const Stored& s) {
  std::set<std::string> out;
  for (const auto& r : s.rows) out.insert(std::get<0>(r));
  return out;
}

}  // namespace

TEST_CASE("sweep: two shards merged, a rerun, and a SIGKILL at a random point with resume all hold exactly an "
          "unsharded sweep's results",
          "[cli][opencl]") {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json");
  const std::string cache = " --cache-dir " + dir.file("cache");  // never the user's binary cache
  test::write_file(plan, kPlan);
  const std::string full = dir.file("full.db"), a = dir.file("a.db"), b = dir.file("b.db"), c = dir.file("c.db");
  const std::string part = dir.file("part.db");

  auto r = test::run_kforge("sweep " + plan + cache + " --quiet --db " + full);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("3 tasks, 3 ran, 0 skipped (finished earlier), 0 failed") != std::string::npos);
  const Stored expected = stored(full);
  REQUIRE(expected.rows.size() == kRows);
  REQUIRE(std::set<Row>(expected.rows.begin(), expected.rows.end()).size() == kRows);

  // Two shards into two databases, merged.
  REQUIRE(test::run_kforge("sweep " + plan + cache + " --quiet --shard 1/2 --db " + a).exit_code == 0);
  REQUIRE(test::run_kforge("sweep " + plan + cache + " --quiet --shard 2/2 --db " + b).exit_code == 0);
  const Stored sa = stored(a), sb = stored(b);
  // index mod 2: gemm and layernorm in shard 1, softmax in shard 2
  CHECK(problems_of(sa).size() == 2);
  CHECK(problems_of(sb).size() == 1);
  for (const auto& p : problems_of(sa)) CHECK(problems_of(sb).count(p) == 0);
  auto merged = test::run_kforge("db merge " + a + " " + b + " -o " + c);
  INFO(merged.err);
  REQUIRE(merged.exit_code == 0);
  CHECK(stored(c).rows == expected.rows);

  // A finished sweep's rerun skips every task and stores nothing more.
  auto again = test::run_kforge("sweep " + plan + cache + " --json --db " + full);
  REQUIRE(again.exit_code == 0);
  const auto j = nlohmann::json::parse(again.out);
  REQUIRE(j["tasks"].size() == 3);
  for (const auto& t : j["tasks"]) {
    CHECK(t["state"] == "skipped");
    CHECK(t["evaluated_now"] == 0);
    CHECK(t["winner"].is_object());
    // Nothing re-timed now: no finalist to call within noise of the winner.
    CHECK(t["within_noise_of_winner"].is_array());
    CHECK(t["within_noise_of_winner"].empty());
  }
  CHECK(stored(full).rows == expected.rows);

  // SIGKILL after a random number of stored results, then resume.
  std::random_device rd;
  const std::size_t kill_after = 1 + rd() % (kRows - 2);  // 1..kRows-2
  INFO("kill after " << kill_after << " rows");
  const std::string cmd = "exec " + std::string(KFORGE_CLI) + " sweep " + plan + cache + " --quiet --db " + part +
                          " >/dev/null 2>&1";
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (std::chrono::steady_clock::now() < deadline && stored(part).rows.size() < kill_after) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  const Stored before = stored(part);
  INFO("rows when killed: " << before.rows.size() << ", finished tasks: " << before.finished_sweeps);
  REQUIRE(before.rows.size() >= kill_after);
  REQUIRE(before.rows.size() < kRows);  // killed mid-way

  auto resumed = test::run_kforge("sweep " + plan + cache + " --json --db " + part);
  INFO(resumed.err);
  REQUIRE(resumed.exit_code == 0);
  const auto jr = nlohmann::json::parse(resumed.out);
  long skipped = 0, now = 0;
  for (const auto& t : jr["tasks"]) {
    skipped += t["state"] == "skipped";
    now += t["evaluated_now"].get<long>();
  }
  CHECK(skipped == before.finished_sweeps);  // tasks finished before the kill are not run again
  CHECK(now == static_cast<long>(kRows - before.rows.size()));  // nothing stored is evaluated again
  CHECK(stored(part).rows == expected.rows);
}

TEST_CASE("sweep: bad input exits 2 with one line naming the plan field, and --dry-run lists a shard", "[cli]") {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json");
  const std::string cache = " --cache-dir " + dir.file("cache");  // never the user's binary cache
  test::write_file(plan, R"({"schema_version": 1, "entries": [{"op": "gemm", "shapes": ["M=8,N=8"]}]})");
  auto r = test::run_kforge("sweep " + plan + cache + " --db " + dir.file("x.db"));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "kforge: error: " + plan + ": entries[0].shapes[0]: \"M=8,N=8\": gemm: dimension K is missing\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));

  // A user template that takes f32 only: an f16 task has no template, named before anything runs.
  const std::string tpl = dir.file("gemm_mine");
  std::filesystem::copy(std::string(KFORGE_SOURCE_DIR) + "/templates/gemm/simt_tiled", tpl);
  auto manifest = nlohmann::json::parse(test::read_file(tpl + "/manifest.json"));
  manifest["name"] = "gemm_mine";
  manifest["dtypes"] = {"f32"};
  test::write_file(tpl + "/manifest.json", manifest.dump());
  test::write_file(plan, R"({"schema_version": 1, "entries": [{"op": "gemm", "shapes": ["M=8,N=8,K=8"],
                             "dtypes": ["f32", "f16"]}]})");
  auto no_template = test::run_kforge("sweep " + plan + cache + " --template " + tpl + " --db " + dir.file("x.db"));
  CHECK(no_template.exit_code == 2);
  CHECK(no_template.err ==
        "kforge: error: " + plan + ": entries[0].dtypes[1]: no gemm template for opencl takes dtype \"f16\"\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));

  test::write_file(plan, kPlan);
  auto shard = test::run_kforge("sweep " + plan + cache + " --shard 3/2 --dry-run");
  CHECK(shard.exit_code == 2);
  CHECK(shard.err == "kforge: error: --shard: '3/2' is not I/N with 1 <= I <= N (e.g. 2/4)\n");

  auto dry = test::run_kforge("sweep " + plan + cache + " --shard 2/2 --dry-run --json");
  REQUIRE(dry.exit_code == 0);
  const auto j = nlohmann::json::parse(dry.out);
  CHECK(j["plan_tasks"] == 3);
  REQUIRE(j["tasks"].size() == 1);
  CHECK(j["tasks"][0]["key"] == "softmax/cols=40,rows=3/f32/NN");
  CHECK(j["tasks"][0]["budget"]["max_evals"] == 2);
}

TEST_CASE("sweep: a plan's warm_start proposes a nearby problem's winner after the default", "[cli]") {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("w.db"), cache = " --cache-dir " + dir.file("cache");
  const std::string planted = "BK16_BM32_BN32_PAD0_TM4_TN2_VW4";
  auto t = test::run_kforge("tune --op gemm --shape M=128,N=32,K=32 --config " + planted + cache +
                            " --min-reps 2 --max-reps 2 --quiet --db " + db);
  REQUIRE(t.exit_code == 0);
  test::write_file(plan, R"({"schema_version": 1,
    "budget": {"strategy": "random", "max_evals": 3, "seed": 3, "min_reps": 2, "max_reps": 2, "warm_start": 1},
    "entries": [{"op": "gemm", "shapes": ["M=64,N=32,K=32"]}]})");
  // In the order proposed: timing each batch fastest first would reorder them.
  auto r = test::run_kforge("sweep " + plan + cache + " --strategy-order --quiet --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto settings = column(db, "SELECT settings_json FROM sweeps ORDER BY id");
  REQUIRE(settings.size() == 2);
  CHECK(nlohmann::json::parse(settings[1]).value("warm_start", 0) == 1);
  const auto order = column(db, "SELECT r.config FROM results r JOIN problems p ON p.id = r.problem_id "
                                "WHERE p.key = 'gemm/K=32,M=64,N=32,batch=1/f32/NN' ORDER BY r.id");
  REQUIRE(order.size() == 3);
  CHECK(order[0] == "BK8_BM32_BN32_PAD0_TM2_TN2_VW1");  // the template's default
  CHECK(order[1] == planted);
  // The sweep's winner has its counters rows, as a tune's does (docs/profiling.md).
  const auto collectors = column(db,
                                 "SELECT DISTINCT c.collector FROM counters c JOIN winners w ON "
                                 "w.result_id = c.result_id JOIN problems p ON p.id = w.problem_id "
                                 "WHERE p.key = 'gemm/K=32,M=64,N=32,batch=1/f32/NN' ORDER BY 1");
  CHECK(collectors == std::vector<std::string>{"model", "perf"});
}
