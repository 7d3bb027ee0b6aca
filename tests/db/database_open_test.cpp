// Opening the database: creation, migrations, version checks, and files that
// are foreign, garbage, truncated or corrupt (errors, never writes).
#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <thread>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

namespace kforge {
namespace {

using test::make_result;
using test::raw_exec;
using test::raw_text;
using test::read_file;
using test::seed;
using test::TempDir;
using test::write_file;
using Mode = Database::Mode;

std::size_t files_in(const TempDir& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++n;
  return n;
}

/// Writes a real database holding many results and closes it (WAL checkpointed).
void write_full_database(const std::string& path, int results) {
  auto db = Database::open(path, Mode::kReadWrite).value();
  const auto ids = seed(*db);
  for (int i = 0; i < results; ++i) {
    auto r = make_result(ids, "config_" + std::to_string(i), "ok", 1.0 + i);
    r.compile_log = std::string(200, static_cast<char>('a' + i % 26));
    REQUIRE(db->add_result(r).value());
  }
}

/// Expects both open modes to fail with kBadInput naming the file, leaving its bytes alone.
void expect_rejected(const std::string& path, const std::string& message_part) {
  const std::string before = read_file(path);
  for (Mode mode : {Mode::kReadWrite, Mode::kReadOnly}) {
    auto db = Database::open(path, mode);
    REQUIRE_FALSE(db.ok());
    INFO(db.error().message);
    CHECK(db.error().code == ErrorCode::kBadInput);
    CHECK(db.error().message.rfind(path + ": ", 0) == 0);
    CHECK(db.error().message.find(message_part) != std::string::npos);
    CHECK(db.error().message.find('\n') == std::string::npos);
  }
  CHECK(read_file(path) == before);
}

TEST_CASE("a new file gets every migration and WAL mode", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  {
    auto db = Database::open(path, Mode::kReadWrite).value();
    CHECK(db->schema_version() == kSchemaVersion);
    CHECK(db->path() == path);
    CHECK(raw_text(path, "PRAGMA journal_mode") == "wal");
  }
  CHECK(raw_text(path, "PRAGMA user_version") == std::to_string(kSchemaVersion));
  // An existing empty (0-byte) file is a new database too.
  const std::string empty = dir.file("empty.db");
  write_file(empty, "");
  CHECK(Database::open(empty, Mode::kReadWrite).value()->schema_version() == kSchemaVersion);
}

TEST_CASE("the schema matches its golden file", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  Database::open(path, Mode::kReadWrite).value();
  // Every object's SQL in name order. Changing it needs a new migration (and a
  // kSchemaVersion bump); then regenerate the golden file from the INFO output.
  const std::string schema =
      raw_text(path,
               "SELECT group_concat(sql, ';' || char(10)) || ';' || char(10) FROM "
               "(SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name)");
  const std::string golden = read_file(KFORGE_SOURCE_DIR "/tests/db/schema_v5.sql");
  INFO("actual schema:\n" << schema);
  CHECK(schema == golden);
}

TEST_CASE("a version 1 file migrates to the current version without losing rows", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  test::Ids ids;
  {
    auto v1 = Database::open_at_version(path, 1).value();
    CHECK(v1->schema_version() == 1);
    ids = seed(*v1);
    // What a version 1 kforge wrote: results without resources_json/compile_log.
    CHECK(raw_text(path, "SELECT count(*) FROM pragma_table_info('results') "
                         "WHERE name IN ('resources_json', 'compile_log')") == "0");
  }
  raw_exec(path,
           "INSERT INTO results (sweep_id, device_id, template_id, problem_id, config, status, "
           "median_ms, count, created_at) VALUES (" +
               std::to_string(ids.sweep) + ", " + std::to_string(ids.device) + ", " +
               std::to_string(ids.tmpl) + ", " + std::to_string(ids.problem) +
               ", 'BM64', 'ok', 1.5, 7, '2024-01-01T00:00:00Z');"
               "INSERT INTO winners VALUES (" +
               std::to_string(ids.device) + ", " + std::to_string(ids.problem) + ", " +
               std::to_string(ids.tmpl) + ", 1, 'BM64', 1.5, '2024-01-01T00:00:00Z');");

  SECTION("read-only open refuses and does not migrate") {
    auto ro = Database::open(path, Mode::kReadOnly);
    REQUIRE_FALSE(ro.ok());
    CHECK(ro.error().code == ErrorCode::kBadInput);
    CHECK(ro.error().message ==
          path + ": schema version 1 is older than " + std::to_string(kSchemaVersion) +
              "; run `kforge db migrate`");
    CHECK(raw_text(path, "PRAGMA user_version") == "1");
  }
  SECTION("read-write open migrates") {
    auto db = Database::open(path, Mode::kReadWrite).value();
    CHECK(db->schema_version() == kSchemaVersion);
    CHECK(raw_text(path, "PRAGMA user_version") == std::to_string(kSchemaVersion));

    auto rs = db->results().value();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].config == "BM64");
    CHECK(rs[0].median_ms == 1.5);
    CHECK(rs[0].count == 7);
    CHECK(rs[0].created_at == "2024-01-01T00:00:00Z");
    CHECK(rs[0].resources_json.empty());
    CHECK(rs[0].compile_log.empty());
    CHECK(db->devices().value().size() == 1);
    CHECK(db->sweeps().value().size() == 1);
    CHECK(db->winners().value().at(0).config == "BM64");

    auto r = make_result(ids, "BM128", "ok", 1.0);
    r.resources_json = R"({"registers":64})";
    r.compile_log = "warning: spilled";
    REQUIRE(db->add_result(r).value());
    auto after = db->results({{}, {}, {}}).value();
    REQUIRE(after.size() == 2);
    CHECK(after[1].resources_json == r.resources_json);
    CHECK(after[1].compile_log == r.compile_log);
    CHECK(db->winners().value().at(0).config == "BM128");
  }
}

TEST_CASE("concurrent first opens migrate once", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  std::vector<int> versions(4, -1);
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    threads.emplace_back([&, i] {
      auto db = Database::open(path, Mode::kReadWrite);
      if (db) versions[i] = (*db)->schema_version();
      else errors[i] = db.error().message;
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < versions.size(); ++i) {
    INFO(errors[i]);
    CHECK(versions[i] == kSchemaVersion);
  }
}

TEST_CASE("a file from a newer kforge is refused untouched", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  write_full_database(path, 3);
  raw_exec(path, "PRAGMA user_version = 7");
  expect_rejected(path, "");
  auto db = Database::open(path, Mode::kReadWrite);
  REQUIRE_FALSE(db.ok());
  CHECK(db.error().message ==
        path + ": schema version 7 is newer than this kforge supports (" + std::to_string(kSchemaVersion) +
            "); upgrade kforge");
  CHECK(raw_text(path, "PRAGMA user_version") == "7");
}

TEST_CASE("a file that is not a database is refused untouched", "[db]") {
  TempDir dir;
  SECTION("text") {
    const std::string path = dir.file("notes.db");
    write_file(path, "these are my notes, not a database\n");
    expect_rejected(path, "not a SQLite database");
    auto db = Database::open(path, Mode::kReadWrite);
    CHECK(db.error().message == path + ": not a SQLite database (file is not a database)");
    CHECK(files_in(dir) == 1);  // no -wal, -shm or -journal beside it
  }
  SECTION("random bytes") {
    const std::string path = dir.file("random.db");
    std::mt19937 rng(1234);
    std::string bytes(3 * 4096 + 17, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    write_file(path, bytes);
    expect_rejected(path, "not a SQLite database");
    CHECK(files_in(dir) == 1);
  }
  SECTION("a SQLite database of something else") {
    const std::string path = dir.file("other.db");
    raw_exec(path, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');");
    expect_rejected(path, "not a kforge database");
    CHECK(raw_text(path, "SELECT count(*) FROM sqlite_master") == "1");
  }
}

TEST_CASE("a truncated database is an error, not a crash", "[db]") {
  TempDir dir;
  const std::string full = dir.file("full.db");
  write_full_database(full, 400);
  const std::string bytes = read_file(full);
  REQUIRE(bytes.size() >= 16 * 4096);
  const std::string half = dir.file("half.db");
  write_file(half, bytes.substr(0, bytes.size() / 2));
  expect_rejected(half, "database is corrupt");
}

TEST_CASE("a database with a damaged page is refused by a writer", "[db]") {
  TempDir dir;
  const std::string path = dir.file("damaged.db");
  write_full_database(path, 400);
  std::string bytes = read_file(path);
  REQUIRE(bytes.size() >= 16 * 4096);
  std::mt19937 rng(99);
  for (std::size_t i = 0; i < 4096; ++i) bytes[bytes.size() / 2 + i] = static_cast<char>(rng());
  write_file(path, bytes);

  auto db = Database::open(path, Mode::kReadWrite);
  REQUIRE_FALSE(db.ok());
  INFO(db.error().message);
  CHECK(db.error().code == ErrorCode::kBadInput);
  CHECK(db.error().message.rfind(path + ": database is corrupt: ", 0) == 0);
  CHECK(db.error().message.find('\n') == std::string::npos);
  CHECK(read_file(path) == bytes);
}

TEST_CASE("missing files and directories are named", "[db]") {
  TempDir dir;
  SECTION("read-write into a missing directory") {
    const std::string path = dir.file("no/such/dir/kforge.db");
    auto db = Database::open(path, Mode::kReadWrite);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == ErrorCode::kBadInput);
    CHECK(db.error().message.rfind(path + ": ", 0) == 0);
    CHECK_FALSE(Database::open_at_version(path, 1).ok());
  }
  SECTION("read-only of a missing file") {
    const std::string path = dir.file("kforge.db");
    auto db = Database::open(path, Mode::kReadOnly);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == ErrorCode::kBadInput);
    CHECK(db.error().message == path + ": no such database");
    CHECK_FALSE(std::filesystem::exists(path));
  }
  SECTION("a directory where the file should be") {
    auto db = Database::open(dir.path().string(), Mode::kReadWrite);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == ErrorCode::kBadInput);
  }
  SECTION("an unknown schema version") {
    auto db = Database::open_at_version(dir.file("kforge.db"), kSchemaVersion + 1);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == ErrorCode::kBadInput);
  }
}

}  // namespace
}  // namespace kforge
