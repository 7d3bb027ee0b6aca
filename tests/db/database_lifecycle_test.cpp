// The database's life: many writer processes at once lose nothing, and verify
// finds damage to kforge's invariants (winners, foreign keys) and the file.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

namespace kforge {
namespace {

using test::make_result;
using test::raw_exec;
using test::TempDir;
using Mode = Database::Mode;

/// One writer process: opens the file itself (a fresh file for the first to
/// get there), then commits `count` results, each its own transaction. The
/// exit code says how it went; no Catch2 in the child.
[[noreturn]] void writer(const std::string& path, int index, int count, int start_fd) {
  char go = 0;
  if (read(start_fd, &go, 1) != 1) _exit(10);
  auto db = Database::open(path, Mode::kReadWrite);
  if (!db.ok()) _exit(11);
  // Every writer stores the same device, template and problem: ids must agree.
  const auto ids = test::seed(**db);
  for (int i = 0; i < count; ++i) {
    const std::string config = "W" + std::to_string(index) + "_C" + std::to_string(i);
    auto added = (*db)->add_result(make_result(ids, config, "ok", 100.0 - index - 0.01 * i));
    if (!added.ok() || !*added) _exit(12);
  }
  _exit(0);
}

}  // namespace

TEST_CASE("many writer processes on one database lose nothing", "[db][concurrency]") {
  TempDir dir;
  const std::string path = dir.file("shared.db");
  constexpr int kWriters = 6, kEach = 40;
  int start[2];
  REQUIRE(pipe(start) == 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) writer(path, w, kEach, start[0]);
    pids.push_back(pid);
  }
  // Release them together, onto a file none of them has created yet.
  const std::string go(kWriters, 'g');
  REQUIRE(write(start[1], go.data(), go.size()) == kWriters);
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    INFO("writer exit status " << status);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  close(start[0]);
  close(start[1]);

  auto db = Database::open(path, Mode::kReadOnly).value();
  auto results = db->results().value();
  CHECK(results.size() == static_cast<std::size_t>(kWriters * kEach));
  std::set<std::string> configs;
  for (const auto& r : results) configs.insert(r.config);
  CHECK(configs.size() == results.size());
  CHECK(db->devices().value().size() == 1);
  CHECK(db->templates().value().size() == 1);
  CHECK(db->problems().value().size() == 1);
  auto winners = db->winners().value();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].config == "W5_C39");  // the fastest of all writers
  CHECK(db->verify().value().findings.empty());
}

TEST_CASE("verify reports a healthy database as healthy, with counts", "[db][verify]") {
  TempDir dir;
  const std::string path = dir.file("k.db");
  {
    auto db = Database::open(path, Mode::kReadWrite).value();
    const auto ids = test::seed(*db);
    REQUIRE(db->add_result(make_result(ids, "A", "ok", 2.0)).value());
    REQUIRE(db->add_result(make_result(ids, "B", "ok", 1.0)).value());
    REQUIRE(db->add_result(make_result(ids, "C", "wrong_result", 0.1)).value());
  }
  auto db = Database::open(path, Mode::kReadOnly).value();
  auto report = db->verify();
  REQUIRE(report.ok());
  CHECK(report->schema_version == kSchemaVersion);
  CHECK(report->findings.empty());
  CHECK(report->devices == 1);
  CHECK(report->results == 3);
  CHECK(report->winners == 1);
  CHECK(report->sweeps == 1);
  CHECK(report->unfinished_sweeps == 1);
}

TEST_CASE("verify finds broken invariants", "[db][verify]") {
  TempDir dir;
  const std::string path = dir.file("k.db");
  {
    auto db = Database::open(path, Mode::kReadWrite).value();
    const auto ids = test::seed(*db);
    REQUIRE(db->add_result(make_result(ids, "SLOW", "ok", 2.0)).value());
    REQUIRE(db->add_result(make_result(ids, "FAST", "ok", 1.0)).value());
  }
  std::string expected;
  SECTION("a winner that is not the fastest") {
    raw_exec(path, "UPDATE winners SET result_id = (SELECT id FROM results WHERE config = 'SLOW'), "
                   "config = 'SLOW', median_ms = 2.0");
    expected = "winners: winner of device 1, problem 1, template 1 is result 1, but the fastest declared ok result is 2";
  }
  SECTION("a winner whose config was edited") {
    raw_exec(path, "UPDATE winners SET config = 'BM64);evil'");
    expected = "winners: winner of device 1, problem 1, template 1 does not match result 2";
  }
  SECTION("a missing winner") {
    raw_exec(path, "DELETE FROM winners");
    expected = "winners: no winner row for device 1, problem 1, template 1";
  }
  SECTION("a result naming a missing device") {
    raw_exec(path, "PRAGMA foreign_keys = OFF; UPDATE results SET device_id = 42 WHERE config = 'SLOW'");
    expected = "foreign key: results row 1 references a missing devices row";
  }
  auto db = Database::open(path, Mode::kReadOnly).value();
  auto report = db->verify();
  REQUIRE(report.ok());
  REQUIRE_FALSE(report->findings.empty());
  std::string all;
  for (const auto& f : report->findings) all += f + "\n";
  INFO(all);
  CHECK_THAT(all, Catch::Contains(expected));
}

}  // namespace kforge

namespace kforge {

TEST_CASE("migrate upgrades an old file and refuses what it cannot", "[db][migrate]") {
  TempDir dir;
  const std::string path = dir.file("old.db");
  {
    auto v1 = Database::open_at_version(path, 1).value();
    REQUIRE(v1->schema_version() == 1);
  }
  auto ro = Database::open(path, Mode::kReadOnly);
  REQUIRE_FALSE(ro.ok());
  CHECK_THAT(ro.error().message, Catch::Contains("run `kforge db migrate`"));

  auto first = Database::migrate(path);
  REQUIRE(first.ok());
  CHECK(first->from == 1);
  CHECK(first->to == kSchemaVersion);
  auto again = Database::migrate(path);
  REQUIRE(again.ok());
  CHECK(again->from == kSchemaVersion);
  CHECK(again->to == kSchemaVersion);
  CHECK(Database::open(path, Mode::kReadOnly).ok());

  const std::string missing = dir.file("missing.db");
  auto none = Database::migrate(missing);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message == missing + ": no such database");
  CHECK_FALSE(std::filesystem::exists(missing));

  raw_exec(path, "PRAGMA user_version = 99");
  auto newer = Database::migrate(path);
  REQUIRE_FALSE(newer.ok());
  CHECK_THAT(newer.error().message, Catch::Contains("is newer than this kforge supports"));
}

}  // namespace kforge
