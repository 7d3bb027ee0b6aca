// A sweep killed with SIGKILL mid-way and rerun ends with exactly the results
// of an uninterrupted sweep: no row lost, none duplicated.
#include <catch2/catch.hpp>
#include <signal.h>
#include <sqlite3.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "tests/tools/cli_util.hpp"

extern char** environ;

using namespace kforge;

namespace {

/// config -> status of every stored result; -1 count when unreadable.
std::map<std::string, std::string> stored(const std::string& db_path, long* total = nullptr) {
  std::map<std::string, std::string> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return out;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* st = nullptr;
  long n = 0;
  if (sqlite3_prepare_v2(db, "SELECT config, status FROM results", -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      out[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] =
          reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      ++n;
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (total) *total = n;
  return out;
}

}  // namespace

TEST_CASE("SIGKILL mid-sweep, then rerun: same results, none lost or duplicated", "[cli][slow]") {
  test::TempDir dir;
  // 30 timed launches each, none cut, so that the rows come far enough
  // apart for the kill to land between them: a batch is validated first and
  // then timed, and a few launches each stored all eight within one poll.
  const std::string args = " tune --shape M=64,N=48,K=40 --strategy random --seed 5 --max-evals 8 --quiet"
                           " --min-reps 30 --max-reps 30 --cut-ratio 0 --db ";
  const std::string full = dir.file("full.db"), part = dir.file("part.db");
  REQUIRE(test::run_kforge(args + full).exit_code == 0);
  const auto expected = stored(full);
  REQUIRE(expected.size() == 8);

  const std::string cmd = std::string(KFORGE_CLI) + args + part + " 2>/dev/null";
  const char* argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  pid_t pid = 0;
  // exec so that the kill reaches kforge itself, not only the shell
  const std::string exec_cmd = "exec " + cmd;
  argv[2] = exec_cmd.c_str();
  REQUIRE(posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) == 0);
  long rows = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  while (std::chrono::steady_clock::now() < deadline) {
    stored(part, &rows);
    if (rows >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(kill(pid, SIGKILL) == 0);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  long after_kill = 0;
  stored(part, &after_kill);
  INFO("rows when killed: " << after_kill);
  REQUIRE(after_kill >= 2);
  REQUIRE(after_kill < 8);  // killed mid-way

  auto rerun = test::run_kforge(args + part + " --json");
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.out.find("\"reused\": " + std::to_string(after_kill)) != std::string::npos);
  long total = 0;
  const auto resumed = stored(part, &total);
  CHECK(total == 8);  // no duplicates: every row a distinct config
  CHECK(resumed == expected);
}
