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

#include "tests/tools/cli_util.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";
const std::string kFast = " --min-reps 2 --max-reps 2 --quiet ";

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

TEST_CASE("an empty database path is bad input for every command that takes one", "[cli][input]") {
  test::TempDir dir;
  const std::string file = dir.file("any.json");
  test::write_file(file, "{}");
  const std::vector<std::string> commands = {
      "tune --quiet --max-evals 1 --db ''", "show --db ''", "lookup --db ''", "export --db ''",
      "report --out " + dir.file("r.html") + " --db ''", "capabilities --db ''", "import " + file + " --db ''",
      "sweep " + file + " --db ''", "db verify --db ''", "db migrate --db ''", "db merge '' -o " + dir.file("m.db"),
      "db merge " + file + " -o ''", "compare '' " + file, "db export --db ''"};
  for (const std::string& args : commands) {
    INFO(args);
    check_bad_input(test::run_kforge(args), {"empty path"});
  }
  CHECK_FALSE(std::filesystem::exists(dir.file("m.db")));
}

TEST_CASE("a tune in which no candidate passes validation exits 4", "[cli][input]") {
  test::TempDir dir;
  const std::string db = dir.file("t.db");
  const std::string tune = "tune --template " + kPlanted + " --config BX8_BY4_FLAW1 --shape M=16,N=16,K=16 --db " +
                           db + kFast;
  auto r = test::run_kforge(tune + "--json");
  INFO(r.out.substr(0, 2000) << r.err);
  CHECK(r.exit_code == 4);
  const json j = json::parse(r.out);
  CHECK(j["winner"].is_null());
  CHECK(j["schema_version"] == 1);
  // Stored as wrong_result; the rerun reuses it, and still nothing passed.
  auto again = test::run_kforge(tune);
  INFO(again.out << again.err);
  CHECK(again.exit_code == 4);
  CHECK_THAT(again.out, Catch::Contains("no candidate passed validation"));
}

TEST_CASE("a manifest value 10**400 is bad input naming the manifest and the field", "[cli][input]") {
  test::TempDir dir;
  const auto tdir = dir.path() / "huge";
  std::filesystem::copy(kPlanted, tdir);
  auto m = test::read_file((tdir / "manifest.json").string());
  m.replace(m.find("\"values\": [8, 16]"), 17, "\"values\": [8, 1" + std::string(400, '0') + "]");
  test::write_file((tdir / "manifest.json").string(), m);
  auto r = test::run_kforge("templates --template " + tdir.string());
  check_bad_input(r, {"manifest.json", "parameters[0].values[1]", "out of range"});
  CHECK_THAT(r.err, !Catch::Contains("out_of_range") && !Catch::Contains("json.exception"));
  CHECK(r.err.size() < 300);
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

TEST_CASE("an unusable KFORGE_CACHE_DIR costs a warning and the disk cache, an unusable --cache-dir is bad input",
          "[cli][input]") {
  test::TempDir dir;
  const std::string not_a_dir = dir.file("plain-file");
  test::write_file(not_a_dir, "x");
  const std::string tune = "tune --shape M=8,N=8,K=8 --max-evals 1 --db " + dir.file("c.db") + kFast;
  {
    test::ScopedEnv cache("KFORGE_CACHE_DIR", not_a_dir);
    auto r = test::run_kforge(tune + "--json");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("warning") && Catch::Contains(not_a_dir) &&
                          Catch::Contains("KFORGE_CACHE_DIR") && Catch::Contains("without the disk cache"));
    CHECK(json::parse(r.out)["winner"].is_object());
  }
  check_bad_input(test::run_kforge(tune + "--cache-dir " + not_a_dir), {"--cache-dir", not_a_dir});
}

TEST_CASE("impossible tune flags are bad input before anything is stored, with readable bounds", "[cli][input]") {
  test::TempDir dir;
  const std::string fresh = dir.file("fresh.db");
  for (const char* flags : {"--cut-ratio nan", "--cut-ratio inf", "--cut-ratio -1", "--min-reps -3", "--min-reps 0",
                            "--min-reps 5 --max-reps 2", "--strategy nope", "--time-budget -1", "--time-budget nan",
                            "--max-evals -1", "--launch-timeout 0", "--launch-timeout nan"}) {
    auto r = test::run_kforge(std::string("tune --quiet --shape M=8,N=8,K=8 ") + flags + " --db " + fresh);
    INFO(flags);
    check_bad_input(r, {std::string(flags).substr(0, std::string(flags).find(' '))});
    CHECK(r.err.size() < 200);  // no 309-digit bound
    CHECK_THAT(r.err, !Catch::Contains("1797693134862315"));
    CHECK_FALSE(std::filesystem::exists(fresh));
  }
}

TEST_CASE("a rejected tune adds no sweep row", "[cli][input]") {
  test::TempDir dir;
  const std::string db = dir.file("keep.db");
  test::build_fixture_db(db, test::Fixture::kBase);
  const auto sweeps = count_rows(db, "sweeps");
  for (const char* flags : {"--strategy nope", "--config garbage", "--config BX8_BY4_FLAW9", "--config BX8"}) {
    auto r = test::run_kforge("tune --template " + kPlanted + " --shape M=8,N=8,K=8 " + flags + " --db " + db + kFast);
    INFO(flags);
    check_bad_input(r, {});
    CHECK(count_rows(db, "sweeps") == sweeps);
  }
}

TEST_CASE("export and report take --json: what they wrote, where, and counts", "[cli][input]") {
  test::TempDir dir;
  const std::string db = dir.file("f.db");
  test::build_fixture_db(db, test::Fixture::kBase);
  const std::string csv = dir.file("w.csv");
  auto e = test::run_kforge("export --format csv --json --db " + db + " --out " + csv);
  INFO(e.err);
  REQUIRE(e.exit_code == 0);
  const json ej = json::parse(e.out);
  CHECK(ej["schema_version"] == 1);
  CHECK(ej["out"] == csv);
  CHECK(ej["format"] == "csv");
  CHECK(ej["winners"].get<int>() > 0);
  CHECK(ej["bytes"] == test::read_file(csv).size());
  check_bad_input(test::run_kforge("export --json --db " + db), {"--json", "--out"});

  const std::string html = dir.file("r.html");
  auto r = test::run_kforge("report --json --db " + db + " --out " + html);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json rj = json::parse(r.out);
  CHECK(rj["schema_version"] == 1);
  CHECK(rj["out"] == html);
  CHECK(rj["tuned_problems"].get<int>() > 0);
  CHECK(rj["bytes"] == test::read_file(html).size());

  const json shown = json::parse(test::run_kforge("show --json --db " + db).out);
  CHECK(shown["schema_version"] == 1);
  CHECK(shown["database_schema_version"].get<int>() > 1);
}

TEST_CASE("with --json an error is one JSON object on stderr naming the file, field and value", "[cli][input]") {
  test::TempDir dir;
  auto error_of = [](const test::CommandResult& r) {
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    return json::parse(r.err);
  };
  const std::string folder = dir.path().string();
  const json not_db = error_of(test::run_kforge("show --json --db " + folder));
  CHECK(not_db["file"] == folder);
  CHECK_THAT(not_db["error"].get<std::string>(), Catch::Contains("not a database file"));

  const json flag = error_of(test::run_kforge("tune --json --cut-ratio nan --db " + dir.file("x.db")));
  CHECK(flag["field"] == "--cut-ratio");
  CHECK(flag["value"] == "nan");
  CHECK(flag["file"].is_null());

  const std::string plan = dir.file("plan.json");
  test::write_file(plan, R"({"schema_version": 1, "entries": [{"op": "conv9", "shapes": ["M=8"]}]})");
  const json in_plan = error_of(test::run_kforge("sweep --json --dry-run " + plan));
  CHECK(in_plan["file"] == plan);
  CHECK(in_plan["field"] == "entries[0].op");
  CHECK(in_plan["value"] == "conv9");

  const json unknown = error_of(test::run_kforge("show --json --no-such-flag"));
  CHECK_THAT(unknown["error"].get<std::string>(), Catch::Contains("--no-such-flag"));
}
