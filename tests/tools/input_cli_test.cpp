// Hostile and mistaken input at the CLI edge: deeply nested JSON, empty or
// unusable paths, impossible flag values, databases with a wrong version.
// Each is exit 2 with one line naming the file, field or value, and leaves
// what is stored as it was; with --json the error is JSON on stderr.
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"
#include "tools_fixtures.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void sql(const std::string& db, const std::string& statement) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err);
  INFO(statement << ": " << (err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(h);
  REQUIRE(rc == SQLITE_OK);
}

std::int64_t count_rows(const std::string& db, const std::string& table) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, ("SELECT count(*) FROM " + table).c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  const std::int64_t n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/// Exit 2 and one line on stderr that contains every one of `names`.
void check_bad_input(const test::CommandResult& r, std::initializer_list<std::string> names) {
  INFO("stdout: " << r.out.substr(0, 500) << "\nstderr: " << r.err.substr(0, 2000));
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  for (const auto& n : names) CHECK_THAT(r.err, Catch::Contains(n));
}

}  // namespace

TEST_CASE("deeply nested JSON in a sweep plan, an import file or a manifest: exit 2 naming the file",
          "[cli][input]") {
  test::TempDir dir;
  const std::string deep = dir.file("d.json");
  test::write_file(deep, nested(100000));
  check_bad_input(test::run_kforge("sweep " + deep + " --dry-run"), {"d.json", "nested deeper than 64"});
  check_bad_input(test::run_kforge("import " + deep + " --db " + dir.file("i.db")), {"d.json", "nested deeper"});
  CHECK_FALSE(std::filesystem::exists(dir.file("i.db")));

  const std::string plan = dir.file("plan.json");
  test::write_file(plan, R"({"schema_version": 1, "entries": [{"op": "gemm", "shapes": )" + nested(1000) + "}]}");
  check_bad_input(test::run_kforge("sweep " + plan + " --dry-run"), {"plan.json", "entries[0].shapes"});

  const auto tdir = dir.path() / "deep";
  std::filesystem::copy(kPlanted, tdir);
  auto m = test::read_file((tdir / "manifest.json").string());
  m.replace(m.find("\"envelope\": []"), 14, "\"envelope\": " + nested(100000));
  test::write_file((tdir / "manifest.json").string(), m);
  check_bad_input(test::run_kforge("templates --template " + tdir.string()), {"manifest.json", "envelope"});
}

TEST_CASE("deeply nested JSON in database columns: show and export warn or keep the text, never crash",
          "[cli][input]") {
  test::TempDir dir;
  const std::string db = dir.file("deep.db");
  test::build_fixture_db(db, test::Fixture::kBase);
  sql(db, "UPDATE devices SET info_json = '" + nested(100000) + "' WHERE key = 'fixture-pocl'");
  sql(db, "UPDATE results SET samples_json = '" + nested(100000) + "', resources_json = '" + nested(100000) +
              "' WHERE id = (SELECT min(id) FROM results)");

  auto show = test::run_kforge("show --json --results --db " + db);
  INFO(show.err.substr(0, 2000));
  REQUIRE(show.exit_code == 0);
  const json shown = json::parse(show.out);
  for (const auto& d : shown["devices"]) {
    if (d["key"] == "fixture-pocl") CHECK(d["info"].is_null());
  }
  CHECK_THAT(show.err, Catch::Contains("fixture-pocl info_json") && Catch::Contains("nested deeper than 64"));
  CHECK_THAT(show.err, Catch::Contains("samples_json") && Catch::Contains("resources_json"));

  auto exported = test::run_kforge("export --all-results --include-stale --db " + db);
  INFO(exported.err.substr(0, 2000));
  REQUIRE(exported.exit_code == 0);
  const json doc = json::parse(exported.out);
  bool kept = false;
  for (const auto& d : doc["devices"]) kept = kept || (d["key"] == "fixture-pocl" && d["info"] == nested(100000));
  CHECK(kept);  // the text as it is, for import to store again
  for (const char* format : {"csv", "header", "markdown"}) {
    auto r = test::run_kforge(std::string("export --format ") + format + " --db " + db);
    INFO(format << ": " << r.err.substr(0, 2000));
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("a database path that is a device or a directory is bad input naming it", "[cli][input]") {
  test::TempDir dir;
  const std::string folder = dir.path().string();
  for (const std::string& db : {std::string("/dev/null"), folder}) {
    for (const std::string cmd : {"show", "export", "db verify", "tune --quiet --max-evals 1 --shape M=8,N=8,K=8"}) {
      INFO(cmd << " --db " << db);
      check_bad_input(test::run_kforge(cmd + " --db " + db), {db, "not a database file"});
    }
  }
}

TEST_CASE("a database whose user_version is 1 or -5 is bad input naming it, and stays as it was", "[cli][input]") {
  test::TempDir dir;
  const std::string source = dir.file("source.db");
  test::build_fixture_db(source, test::Fixture::kBase);
  const std::string file = dir.file("all.json");
  REQUIRE(test::run_kforge("db export --db " + source + " --out " + file).exit_code == 0);
  const int version = GENERATE(1, -5);
  const std::string db = dir.file("v.db");
  test::build_fixture_db(db, test::Fixture::kBase);
  sql(db, "PRAGMA user_version = " + std::to_string(version));
  const auto results = count_rows(db, "results");
  for (const std::string& cmd : {"show --db " + db, "import " + file + " --db " + db, "db migrate --db " + db}) {
    INFO(version << ": " << cmd);
    check_bad_input(test::run_kforge(cmd), {"v.db", "schema version " + std::to_string(version)});
  }
  CHECK(count_rows(db, "results") == results);
}
