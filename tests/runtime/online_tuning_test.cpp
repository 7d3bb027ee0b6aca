// Online tuning on PoCL: a lookup's miss tuned by `kforge __online-tune` in a
// process of its own (runtime/lookup/online_tuning.hpp), with planted faults among
// the candidates.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "runtime/lookup/online_job.hpp"
#include "runtime/platform/subprocess.hpp"
#include "tests/runtime/lookup_fixtures.hpp"

extern char** environ;

using namespace kforge;
using namespace kforge::test;

namespace {

/// gemm_faulty (tests/data/templates) with FLAW 0 (correct), 1 (crashes the
/// process) and 4 (a wrong result), BX 8 and 16: six candidates, four faulty.
std::string planted_dir(const TempDir& dir) {
  const std::string out = dir.file("gemm_online_planted");
  std::filesystem::create_directories(out);
  const std::string from = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_faulty/";
  std::filesystem::copy_file(from + "gemm_faulty.c", out + "/gemm_faulty.c");
  std::string manifest = read_file(from + "manifest.json");
  const auto replace = [&](const std::string& a, const std::string& b) {
    const auto at = manifest.find(a);
    REQUIRE(at != std::string::npos);
    manifest.replace(at, a.size(), b);
  };
  replace("\"name\": \"gemm_faulty\"", "\"name\": \"gemm_online_planted\"");
  replace("\"values\": [0, 1, 2, 3, 4, 5, 6]", "\"values\": [0, 1, 4]");
  write_file(out + "/manifest.json", manifest);
  return out;
}

OnlineTuningOptions online(OnlineMode mode, int max_evals) {
  OnlineTuningOptions o;
  o.mode = mode;
  o.max_evals = max_evals;
  o.time_budget_s = 300;
  o.warm_start = 0;
  o.command = {KFORGE_CLI, "__online-tune"};
  return o;
}

/// One column of one row of SQL over `db`, as text.
std::string sql_value(const std::string& db, const std::string& sql) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_busy_timeout(h, 10000);  // a tuner may be writing
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::string out;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

int count_results(const std::string& db, const std::string& where = "1") {
  if (!std::filesystem::exists(db)) return 0;
  if (sql_value(db, "SELECT count(*) FROM sqlite_master WHERE name = 'results'") != "1") return 0;  // being created
  return std::stoi(sql_value(db, "SELECT count(*) FROM results WHERE " + where));
}

const Problem kProblem = gemm(24, 16, 8);

}  // namespace

TEST_CASE("a background miss is tuned in a tuner process and the next select answers exact",
          "[online][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  LookupOptions o = w.options(dir.file("user.db"));  // does not exist yet
  o.online = online(OnlineMode::kBackground, 6);
  auto lookup = open_lookup(o, **device, catalog_with({planted_dir(dir)}));

  const Selection miss = select_ok(*lookup, kProblem);
  CHECK(miss.rule == SelectionRule::kDefault);
  CHECK(miss.explanation.find("online: queued for tuning in the background (up to 6 candidates") !=
        std::string::npos);
  REQUIRE(lookup->wait_online_idle(600));

  const Selection hit = select_ok(*lookup, kProblem);
  INFO(hit.explanation << read_file(dir.file("user.db.online.log")));
  REQUIRE(hit.rule == SelectionRule::kExact);
  CHECK(hit.template_name == "gemm_online_planted");
  CHECK(hit.config.find("FLAW0") != std::string::npos);
  CHECK(hit.online == "background");
  CHECK(hit.explanation.find("tuned online (background)") != std::string::npos);
  check_launch(*lookup, **device, hit);
  // The whole space, planted faults caught and named.
  const std::string db = dir.file("user.db");
  CHECK(count_results(db) == 6);
  CHECK(count_results(db, "status = 'crash'") == 2);
  CHECK(count_results(db, "status = 'wrong_result'") == 2);
  CHECK(count_results(db, "status = 'ok'") == 2);
  // kforge show names the winner online-tuned.
  auto shown = run_subprocess({KFORGE_CLI, "show", "--json", "--db", db});
  REQUIRE(shown.ok());
  INFO(shown->output);
  const auto winners = nlohmann::json::parse(shown->output.substr(shown->output.find('{'))).at("winners");
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].at("tuned_by") == "online");
  CHECK(winners[0].at("online_mode") == "background");
  auto table = run_subprocess({KFORGE_CLI, "show", "--db", db});
  REQUIRE(table.ok());
  CHECK(table->output.find("online (background)") != std::string::npos);
}

TEST_CASE("a blocking lookup tunes on the first select, within the budget", "[online][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(dir.file("user.db")), **device, catalog_with({planted_dir(dir)}));
  REQUIRE(lookup->set_online_tuning(online(OnlineMode::kBlocking, 3)).ok());

  const Selection first = select_ok(*lookup, kProblem);
  INFO(first.explanation << read_file(dir.file("user.db.online.log")));
  CHECK(first.rule == SelectionRule::kExact);  // the template's default (FLAW 0) is the first candidate
  CHECK(first.online == "blocking");
  CHECK(first.explanation.find("online: tuned here first, blocking (tuner exit 0") != std::string::npos);
  CHECK(count_results(dir.file("user.db")) == 3);
  check_launch(*lookup, **device, first);
}

TEST_CASE("two lookups missing one problem tune it once", "[online][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string templates = planted_dir(dir);
  Warnings w;
  LookupOptions o = w.options(dir.file("user.db"));
  o.online = online(OnlineMode::kBackground, 6);
  auto a = open_lookup(o, **device, catalog_with({templates}));
  auto b = open_lookup(o, **device, catalog_with({templates}));
  select_ok(*a, kProblem);
  select_ok(*b, kProblem);
  REQUIRE(a->wait_online_idle(600));
  REQUIRE(b->wait_online_idle(600));
  INFO(read_file(dir.file("user.db.online.log")));
  CHECK(count_results(dir.file("user.db")) == 6);  // not 12: the second found them stored
  CHECK(select_ok(*a, kProblem).rule == SelectionRule::kExact);
  CHECK(select_ok(*b, kProblem).rule == SelectionRule::kExact);
}

TEST_CASE("a killed online tuner leaves the database whole and the next one finishes", "[online][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = dir.file("user.db");
  OnlineJob job;
  job.db = db;
  job.device = (*device)->info().hardware_key();
  job.problem = *GemmOperator().normalize(kProblem);
  job.template_dirs = {planted_dir(dir)};
  job.mode = "background";
  job.max_evals = 6;
  const std::string text = to_json(job).dump();
  std::vector<char*> argv = {const_cast<char*>(KFORGE_CLI), const_cast<char*>("__online-tune"),
                             const_cast<char*>(text.c_str()), nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, KFORGE_CLI, nullptr, nullptr, argv.data(), environ) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (count_results(db) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const int stored = count_results(db);
  INFO("stored before the kill: " << stored);
  CHECK(stored >= 2);
  CHECK(stored < 6);
  CHECK(sql_value(db, "PRAGMA integrity_check") == "ok");

  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with(job.template_dirs));
  REQUIRE(lookup->set_online_tuning(online(OnlineMode::kBlocking, 6)).ok());
  const Selection sel = select_ok(*lookup, kProblem);
  INFO(sel.explanation << read_file(db + ".online.log"));
  CHECK(sel.rule == SelectionRule::kExact);
  CHECK(count_results(db) == 6);
  CHECK(sql_value(db, "SELECT count(DISTINCT config) FROM results") == "6");
}

TEST_CASE("online tuning refuses what it cannot do, naming it", "[online][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto no_user_db = open_lookup(w.options(""), **device, catalog_with({}));
  auto refused = no_user_db->set_online_tuning(online(OnlineMode::kBackground, 6));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("no user database") != std::string::npos);
  {
    ScopedEnv env("KFORGE_ONLINE_TUNING", "sometimes");
    auto opened = Lookup::open(w.options(dir.file("user.db")), **device, catalog_with({}));
    REQUIRE_FALSE(opened.ok());
    CHECK(opened.error().message.find("KFORGE_ONLINE_TUNING='sometimes'") != std::string::npos);
  }
  // A tuner that cannot be started leaves the lookup answering from the chain.
  auto lookup = open_lookup(w.options(dir.file("user.db")), **device, catalog_with({}));
  OnlineTuningOptions missing = online(OnlineMode::kBlocking, 2);
  missing.command = {dir.file("no-such-kforge"), "__online-tune"};
  REQUIRE(lookup->set_online_tuning(missing).ok());
  const Selection sel = select_ok(*lookup, kProblem);
  CHECK(sel.rule == SelectionRule::kDefault);
  CHECK(sel.explanation.find("online: tuned here first, blocking (not started: cannot start the online tuner") !=
        std::string::npos);
}
