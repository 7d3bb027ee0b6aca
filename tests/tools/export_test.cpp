// kforge export and import: golden files for every format, filters, stale
// template versions, the JSON round trip, and the generated C++ header
// compiled and run without SQLite.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"
#include "tests/tools/golden.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

struct FixtureDir {
  test::TempDir dir;
  std::string base = dir.file("base.db");
  FixtureDir() { test::build_fixture_db(base, test::Fixture::kBase); }
};

std::string ok_output(const test::CommandResult& r) {
  INFO("stdout: " << r.out.substr(0, 2000) << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

/// Winners of a JSON export as comparable tuples.
std::vector<std::string> winner_lines(const json& doc) {
  std::vector<std::string> out;
  for (const auto& w : doc["winners"]) {
    out.push_back(w["device"].get<std::string>() + " " + w["problem"].get<std::string>() + " " +
                  w["template"].get<std::string>() + " " + w["template_hash"].get<std::string>() + " " +
                  w["config"].get<std::string>() + " " + w["median_ms"].dump());
  }
  return out;
}

/// Runs SQL on the fixture behind kforge's back (a tamperer's edit).
void tamper(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  INFO(msg);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace

TEST_CASE("export: every format matches its golden file", "[export]") {
  FixtureDir f;
  const std::string db = " --db " + f.base;
  test::check_golden("export_winners.json", ok_output(test::run_kforge("export --format json" + db)));
  test::check_golden("export_winners.csv", ok_output(test::run_kforge("export --format csv" + db)));
  test::check_golden("export_winners.md", ok_output(test::run_kforge("export --format markdown" + db)));
  test::check_golden("export_winners.hpp", ok_output(test::run_kforge("export --format header" + db)));
  test::check_golden("export_all_results.csv",
                     ok_output(test::run_kforge("export --format csv --all-results --device fixture-pocl" + db)));
  test::check_golden("export_all_results.md",
                     ok_output(test::run_kforge("export --format md --all-results --device sm_90" + db)));
}

TEST_CASE("export: stale template versions are left out unless asked for", "[export]") {
  FixtureDir f;
  auto r = test::run_kforge("export --format json --all-results --db " + f.base);
  const json kept = json::parse(ok_output(r));
  CHECK(r.err.find("left out 1 winner of template versions that are no longer current") != std::string::npos);
  for (const auto& w : kept["winners"]) CHECK(w["template_hash"] != test::kStaleHash);
  for (const auto& x : kept["results"]) CHECK(x["template_hash"] != test::kStaleHash);
  for (const auto& t : kept["templates"]) CHECK(t["hash"] != test::kStaleHash);

  const json all = json::parse(ok_output(test::run_kforge("export --include-stale --all-results --db " + f.base)));
  CHECK(all["winners"].size() == kept["winners"].size() + 1);
  CHECK(all["results"].size() == kept["results"].size() + 12);

  // The CSV says which rows are current, stale, or from templates kforge does not know.
  const std::string csv = ok_output(test::run_kforge("export --format csv --include-stale --db " + f.base));
  CHECK(csv.find(",stale,") != std::string::npos);
  CHECK(csv.find(",current,") != std::string::npos);
  CHECK(csv.find(",unknown,") != std::string::npos);
}

TEST_CASE("export: undeclared configurations are skipped with a warning naming the row", "[export]") {
  FixtureDir f;
  // The fastest pocl winner becomes BM48 (not declared), and one more
  // result gets an EVIL parameter.
  tamper(f.base,
         "UPDATE results SET config = 'BK8_BM48_BN64_PAD0_TM4_TN2_VW1' WHERE id = (SELECT result_id FROM winners w "
         "JOIN devices d ON d.id = w.device_id WHERE d.key = 'fixture-pocl' ORDER BY w.median_ms LIMIT 1); "
         "UPDATE winners SET config = 'BK8_BM48_BN64_PAD0_TM4_TN2_VW1' WHERE result_id = (SELECT id FROM results "
         "WHERE config = 'BK8_BM48_BN64_PAD0_TM4_TN2_VW1'); "
         "UPDATE results SET config = 'BK8_BM32_BN32_EVIL1_PAD0_TM2_TN2_VW1' WHERE id = (SELECT min(id) FROM results "
         "WHERE status = 'ok' AND config = 'BK8_BM32_BN32_PAD0_TM2_TN2_VW1')");
  for (const char* format : {"json", "csv", "markdown", "header"}) {
    for (const char* all : {"", " --all-results"}) {
      INFO(format << all);
      const auto r = test::run_kforge(std::string("export --format ") + format + all + " --db " + f.base);
      const std::string out = ok_output(r);
      CHECK(out.find("BM48") == std::string::npos);
      CHECK(out.find("EVIL") == std::string::npos);
      CHECK_THAT(r.err, Catch::Contains("warning: skipped result") &&
                            Catch::Contains("gemm_simt_tiled BK8_BM48_BN64_PAD0_TM4_TN2_VW1, device fixture-pocl, "
                                            "problem gemm/") &&
                            Catch::Contains("parameter BM: value 48 is not declared"));
      if (*all) CHECK_THAT(r.err, Catch::Contains("unknown parameter 'EVIL'"));
    }
  }
}

TEST_CASE("export: a stored manifest edited under the catalog's own hash does not declare configurations",
          "[export]") {
  FixtureDir f;
  const char* kBm48 = "BK8_BM48_BN64_PAD0_TM4_TN2_VW1";
  // The stored text of the current gemm_simt_tiled declares BM 48 (its hash
  // unchanged); the fastest pocl winner becomes BM 48, which the lookup refuses.
  std::ifstream in(std::string(KFORGE_TEST_DATA_DIR) + "/../../templates/gemm/simt_tiled/manifest.json");
  json manifest = json::parse(in);
  manifest["parameters"][0]["values"] = json::array({16, 32, 48, 64, 128});
  std::string text = manifest.dump();
  for (std::size_t at = text.find('\''); at != std::string::npos; at = text.find('\'', at + 2)) text.insert(at, "'");
  tamper(f.base,
         "UPDATE templates SET manifest_json = '" + text + "' WHERE name = 'gemm_simt_tiled' AND hash != '" +
             test::kStaleHash + "'; "
             "UPDATE results SET config = '" + std::string(kBm48) + "' WHERE id = (SELECT result_id FROM winners w "
             "JOIN devices d ON d.id = w.device_id WHERE d.key = 'fixture-pocl' ORDER BY w.median_ms LIMIT 1); "
             "UPDATE winners SET config = '" + kBm48 + "' WHERE result_id = (SELECT id FROM results WHERE config = '" +
             kBm48 + "')");
  for (const char* format : {"json", "header"}) {
    INFO(format);
    const auto r = test::run_kforge(std::string("export --format ") + format + " --db " + f.base);
    CHECK(ok_output(r).find("BM48") == std::string::npos);
    CHECK_THAT(r.err, Catch::Contains("warning: skipped result") &&
                          Catch::Contains(std::string("gemm_simt_tiled ") + kBm48 + ", device fixture-pocl") &&
                          Catch::Contains("parameter BM: value 48 is not declared"));
  }
}

TEST_CASE("export: a problem whose stored dims are not positive 32-bit integers is skipped", "[export]") {
  const std::vector<std::pair<std::string, std::string>> corruptions = {
      {R"({"M": -5, "N": 64, "K": 64, "batch": 1})", "dim M is '-5'"},
      {R"({"M": 1e30, "N": 64, "K": 64, "batch": 1})", "dim M is '1e+30'"},
      {R"("abc")", "is not an object of dims"},
  };
  for (const auto& [dims, why] : corruptions) {
    FixtureDir f;
    const std::string before = ok_output(test::run_kforge("export --format csv --db " + f.base));
    tamper(f.base, "UPDATE problems SET dims_json = '" + dims + "' WHERE id = (SELECT min(id) FROM problems)");
    for (const char* format : {"json", "csv"}) {
      INFO(dims << " " << format);
      const auto r = test::run_kforge(std::string("export --format ") + format + " --db " + f.base);
      const std::string out = ok_output(r);
      CHECK_THAT(r.err, Catch::Contains("warning: skipped") && Catch::Contains(why));
      CHECK(out.find("1e+30") == std::string::npos);
    }
    const auto csv = ok_output(test::run_kforge("export --format csv --db " + f.base));
    CHECK(std::count(csv.begin(), csv.end(), '\n') < std::count(before.begin(), before.end(), '\n'));
  }
}

TEST_CASE("export: a winner whose result row is missing, failing or another is skipped with a warning",
          "[export]") {
  // Issue 56: a tampered winners row was exported as if it had been measured.
  const std::string fastest = "(SELECT result_id FROM winners w JOIN devices d ON d.id = w.device_id WHERE "
                              "d.key = 'fixture-pocl' ORDER BY w.median_ms LIMIT 1)";
  const std::vector<std::pair<std::string, std::string>> tamperings = {
      {"UPDATE results SET status = 'wrong_result' WHERE id = " + fastest, "has status wrong_result"},
      {"UPDATE winners SET result_id = 999999 WHERE result_id = " + fastest, "does not exist"},
      {"UPDATE winners SET config = 'BK8_BM16_BN16_PAD0_TM1_TN2_VW1' WHERE result_id = " + fastest,
       "is for configuration"},
  };
  for (const auto& [sql, why] : tamperings) {
    FixtureDir f;
    const std::string before = ok_output(test::run_kforge("export --format csv --db " + f.base));
    tamper(f.base, sql);
    const auto r = test::run_kforge("export --format header --db " + f.base);
    INFO(sql << "\n" << r.err);
    ok_output(r);
    CHECK_THAT(r.err, Catch::Contains("warning: skipped winner gemm_simt_tiled") && Catch::Contains(why));
    const auto csv = test::run_kforge("export --format csv --db " + f.base);
    CHECK(std::count(csv.out.begin(), csv.out.end(), '\n') + 1 ==
          std::count(before.begin(), before.end(), '\n'));
  }
}

TEST_CASE("export: csv has a column per dimension and parameter, and the problem's flops and bytes", "[export]") {
  FixtureDir f;
  const std::string csv = ok_output(test::run_kforge("export --format csv --db " + f.base));
  const std::string header = csv.substr(0, csv.find("\r\n"));
  CHECK_THAT(header, Catch::Contains(",problem,K,M,N,batch,dtype,") &&
                         Catch::Contains(",config,BK,BM,BN,PAD,TM,TN,VW,median_ms,") &&
                         Catch::Contains(",count,flops,bytes,gflops,gbps,"));
  // gemm 256^3: 2*M*N*K flops.
  CHECK_THAT(csv, Catch::Contains(",256,256,256,1,f32,NN,") && Catch::Contains(",33554432,"));
}

TEST_CASE("export: filters by device, operator, dtype and layout", "[export]") {
  FixtureDir f;
  auto winners = [&](const std::string& flags) {
    return json::parse(ok_output(test::run_kforge("export " + flags + " --db " + f.base)))["winners"];
  };
  const json all = winners("");
  REQUIRE(all.size() == 6);
  for (const auto& w : winners("--device h200")) CHECK(w["device"] == "fixture-h200");
  CHECK(winners("--device h200").size() == 3);
  CHECK(winners("--device cuda:sm_90").size() == 3);
  CHECK(winners("--device fixture-pocl").size() == 2);
  CHECK(winners("--dtype f16").size() == 2);
  CHECK(winners("--layout NT --dtype f16").size() == 2);
  CHECK(winners("--op gemm").size() == 6);
  CHECK(winners("--op reduce").empty());
  CHECK(winners("--device no-such-device").empty());
  // Devices, problems and templates follow the rows that remain.
  const json one = json::parse(ok_output(test::run_kforge("export --device mi300x --db " + f.base)));
  CHECK(one["devices"].size() == 1);
  CHECK(one["problems"].size() == 1);
  CHECK(one["templates"].size() == 1);
  CHECK(one["filters"]["device"] == "mi300x");
}

TEST_CASE("export then import gives the same winners", "[export][import]") {
  FixtureDir f;
  for (const char* flags : {"", "--all-results", "--all-results --include-stale"}) {
    INFO(flags);
    const std::string exported = f.dir.file("x.json");
    ok_output(test::run_kforge(std::string("export ") + flags + " --out " + exported + " --db " + f.base));
    const std::string copy = f.dir.file(std::string("copy") + std::to_string(std::hash<std::string>{}(flags)) + ".db");
    const json counts = json::parse(ok_output(test::run_kforge("import --json " + exported + " --db " + copy)));
    CHECK(counts["results_present"] == 0);
    CHECK(counts["results_added"].get<int>() > 0);
    const json before = json::parse(test::read_file(exported));
    const json after =
        json::parse(ok_output(test::run_kforge(std::string("export ") + flags + " --db " + copy)));
    CHECK(winner_lines(after) == winner_lines(before));
    CHECK(after["results"].size() == before["results"].size());
    // Every field of every result survives, ids aside (they are the new database's).
    for (std::size_t i = 0; i < before["results"].size(); ++i) {
      json a = after["results"][i], b = before["results"][i];
      a.erase("id");
      b.erase("id");
      a.erase("sweep");
      b.erase("sweep");
      CHECK(a == b);
    }
    // Importing again adds nothing.
    const json again = json::parse(ok_output(test::run_kforge("import --json " + exported + " --db " + copy)));
    CHECK(again["results_added"] == 0);
    CHECK(again["sweeps_added"] == 0);
    CHECK(again["results_present"] == counts["results_added"]);
  }
}

TEST_CASE("db export and db import are the same round trip", "[export][import]") {
  FixtureDir f;
  const std::string dump = f.dir.file("dump.json");
  ok_output(test::run_kforge("db export --json --out " + dump + " --db " + f.base));
  const json d = json::parse(test::read_file(dump));
  CHECK(d["all_results"] == true);
  CHECK(d["results"].size() == 7 * 12);  // every result, the stale version's included
  const std::string copy = f.dir.file("copy.db");
  ok_output(test::run_kforge("db import " + dump + " --db " + copy));
  const json again = json::parse(ok_output(test::run_kforge("db export --db " + copy)));
  CHECK(winner_lines(again) == winner_lines(d));
}

TEST_CASE("import refuses bad files with one line naming the file and field", "[import]") {
  test::TempDir dir;
  const std::string db = dir.file("t.db");
  auto import_text = [&](const std::string& text) {
    const std::string p = dir.file("bad.json");
    test::write_file(p, text);
    return test::run_kforge("import " + p + " --db " + db);
  };
  FixtureDir f;
  json good = json::parse(ok_output(test::run_kforge("export --db " + f.base)));

  auto r = import_text("{ not json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.json: JSON syntax error at byte") != std::string::npos);

  json newer = good;
  newer["schema_version"] = 99;
  r = import_text(newer.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.json: schema_version: 99 was written by a newer kforge") != std::string::npos);

  json typo = good;
  typo["results"][0]["median_ms"] = "fast";
  r = import_text(typo.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("bad.json: results[0].median_ms: expected a number, got \"fast\"") != std::string::npos);

  json unknown = good;
  unknown["results"][1]["mediam_ms"] = 1.0;
  r = import_text(unknown.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("results[1].mediam_ms: unknown field") != std::string::npos);

  json dangling = good;
  dangling["devices"].erase(0);
  r = import_text(dangling.dump());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown device") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  // Nothing was written by any refused import: the database holds no result.
  const json left = json::parse(ok_output(test::run_kforge("export --all-results --db " + db)));
  CHECK(left["results"].empty());
}

TEST_CASE("a version 1 export without counters is still imported", "[import][counters]") {
  test::TempDir dir;
  const std::string db = dir.file("v1.db");
  const std::string v1 = std::string(KFORGE_TEST_DATA_DIR) + "/interchange/export_v1.json";
  const json old = json::parse(test::read_file(v1));
  REQUIRE(old["schema_version"] == 1);
  const json counts = json::parse(ok_output(test::run_kforge("import --json " + v1 + " --db " + db)));
  CHECK(counts["results_added"] == old["results"].size());
  CHECK(counts["counters_added"] == 0);
  // The file's template hashes are the fixture's, not the built-in ones: stale here.
  const json again = json::parse(ok_output(test::run_kforge("export --include-stale --db " + db)));
  CHECK(again["schema_version"] == 2);
  CHECK(winner_lines(again) == winner_lines(old));
  for (const auto& r : again["results"]) CHECK(r["counters"].empty());

  // A version 1 document has no counters field: one there is a typo or a forgery.
  json forged = old;
  forged["results"][0]["counters"] = json::array();
  test::write_file(dir.file("forged.json"), forged.dump());
  auto r = test::run_kforge("import " + dir.file("forged.json") + " --db " + db);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("forged.json: results[0].counters: unknown field") != std::string::npos);
}

TEST_CASE("a bad counters entry is refused naming the entry and field, and nothing is lost", "[import][counters]") {
  test::TempDir dir;
  FixtureDir f;
  json good = json::parse(ok_output(test::run_kforge("export --db " + f.base)));
  const json row = {{"source", "ncu"},  {"collector", "ncu"}, {"name", "dram__bytes_read.sum"},
                    {"value", 4096.0},  {"unit", "byte"},     {"note", ""},
                    {"tool", "ncu 2025.1.1"}, {"counters_version", 1}, {"created_at", "2026-12-01T00:00:00Z"}};
  good["results"][0]["counters"] = json::array({row});
  const std::string db = dir.file("t.db");
  test::write_file(dir.file("good.json"), good.dump());
  const json counts = json::parse(ok_output(test::run_kforge("import --json " + dir.file("good.json") + " --db " + db)));
  CHECK(counts["counters_added"] == 1);
  const std::string before = ok_output(test::run_kforge("export --all-results --db " + db));

  struct Case {
    std::string field;
    json value;
    std::string expected;
  };
  for (const Case& c : {Case{"value", "lots", "results[1].counters[0].value: expected a number, got \"lots\""},
                        Case{"source", "guess", "results[1].counters[0].source: 'guess' is not one of"},
                        Case{"name", "", "results[1].counters[0].name: empty string"},
                        Case{"counters_version", 0, "results[1].counters[0].counters_version: expected a positive"},
                        Case{"counters_version", std::int64_t{4294967297},
                             "results[1].counters[0].counters_version: expected a positive version up to "
                             "2147483647, got 4294967297"}}) {
    INFO(c.field);
    json bad = good;
    bad["results"][1]["counters"] = json::array({row});
    bad["results"][1]["counters"][0][c.field] = c.value;
    test::write_file(dir.file("bad.json"), bad.dump());
    auto r = test::run_kforge("import " + dir.file("bad.json") + " --db " + db);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("bad.json: " + c.expected) != std::string::npos);
  }
  json unavailable = good;
  json why = row;
  why["source"] = "unavailable";
  why["name"] = "availability";
  why["note"] = "";
  unavailable["results"][1]["counters"] = json::array({why});
  test::write_file(dir.file("bad.json"), unavailable.dump());
  auto r = test::run_kforge("import " + dir.file("bad.json") + " --db " + db);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("results[1].counters[0].note: an unavailable row needs a note") != std::string::npos);
  // What the first import stored is all still there, and nothing was added.
  CHECK(ok_output(test::run_kforge("export --all-results --db " + db)) == before);
}

TEST_CASE("export: a --namespace the header could not declare is bad input", "[export]") {
  // Issue 56: --namespace class wrote a header that did not compile.
  FixtureDir f;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"class", "'class' is a C++ keyword"},
      {"app::new", "'new' is a C++ keyword"},
      {"__app", "'__app' is reserved"},
      {"app::1x", "not a C++ namespace"},
      {"app::::x", "not a C++ namespace"}};
  for (const auto& [ns, why] : cases) {
    const auto r = test::run_kforge("export --format header --namespace " + ns + " --db " + f.base);
    INFO(ns << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--namespace: " + why));
  }
}

TEST_CASE("the generated header compiles without SQLite and finds the winners", "[export]") {
  FixtureDir f;
  const std::string header = f.dir.file("tuned.hpp");
  ok_output(test::run_kforge("export --format header --namespace app::tuned --out " + header + " --db " + f.base));
  // The expected values come from the JSON export of the same database.
  const json doc = json::parse(ok_output(test::run_kforge("export --device fixture-h200 --dtype f16 --db " + f.base)));
  REQUIRE(doc["winners"].size() == 2);
  const json& best = doc["winners"][0];  // sorted by time: the fastest first
  const std::string config = best["config"];
  const std::string problem = best["problem"];
  const std::string program = f.dir.file("main.cpp");
  test::write_file(program, R"(#include <cstdio>
#include <string>
#include "tuned.hpp"
constexpr const app::tuned::Entry* e = app::tuned::find("fixture-h200", ")" + problem + R"(");
// Dereferencing a null pointer is not a constant expression: this fails to compile when the winner is absent.
static_assert(app::tuned::find("fixture-h200", "no-such-problem") == nullptr, "absent problems are absent");
static_assert(e->dim("K") == 1024 && e->dim("batch") == 1, "dims");
int main() {
  std::printf("%zu %s %s BM=%lld %s\n", app::tuned::kNumEntries, std::string(e->template_name).c_str(),
              std::string(e->config).c_str(), static_cast<long long>(e->param("BM")), e->param("XX") == -1 ? "ok" : "bad");
}
)");
  const std::string exe = f.dir.file("prog");
  const std::string cmd = std::string(KFORGE_CXX) + " -std=c++17 -Wall -Wextra -Werror -I" + f.dir.path().string() +
                          " " + program + " -o " + exe + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string log;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) log.append(buf, n);
  INFO(cmd << "\n" << log);
  REQUIRE(pclose(p) == 0);
  FILE* run = popen(exe.c_str(), "r");
  REQUIRE(run != nullptr);
  std::string out;
  while ((n = fread(buf, 1, sizeof buf, run)) > 0) out.append(buf, n);
  REQUIRE(pclose(run) == 0);
  const std::string bm = config.substr(config.find("BM") + 2, config.find('_', config.find("BM")) - config.find("BM") - 2);
  CHECK(out == "5 fixture_gemm_mma " + config + " BM=" + bm + " ok\n");
}

TEST_CASE("export --binaries copies the entries winners name, and refuses a key that is not a digest",
          "[export]") {
  FixtureDir f;
  const std::string digest = "0123456789abcdef0123456789abcdef";
  tamper(f.base, "UPDATE results SET resources_json = json_set(coalesce(resources_json, '{}'), '$.binary_key', '" +
                     digest + "') WHERE id = (SELECT min(result_id) FROM winners)");
  tamper(f.base, "UPDATE results SET resources_json = json_set(coalesce(resources_json, '{}'), '$.binary_key', "
                 "'../../../outside') WHERE id = (SELECT max(result_id) FROM winners)");
  const std::string cache = f.dir.file("cache"), shipped = f.dir.file("shipped");
  std::filesystem::create_directories(cache + "/01");
  test::write_file(cache + "/01/" + digest + ".bin", "entry bytes");
  const auto r = test::run_kforge("export --db " + f.base + " --include-stale --out " + f.dir.file("w.json") + " --binaries " +
                                  shipped + " --cache-dir " + cache + " --json");
  const json summary = json::parse(ok_output(r));
  CHECK(summary["binaries"]["copied"] == 1);
  std::ifstream copied(shipped + "/01/" + digest + ".bin");
  CHECK(std::string(std::istreambuf_iterator<char>(copied), {}) == "entry bytes");
  // Every other winner is named: the tampered key refused, the rest without one.
  const auto& missing = summary["binaries"]["missing"];
  CHECK(missing.size() + 1 == summary["winners"].get<std::size_t>());
  CHECK(std::count_if(missing.begin(), missing.end(), [](const json& m) {
          return m.get<std::string>().find("not a cache digest: '\"../../../outside\"'") != std::string::npos;
        }) == 1);
  CHECK_FALSE(std::filesystem::exists(f.dir.file("outside")));
  CHECK_THAT(r.err, Catch::Contains("kforge: copied 1 binary to " + shipped));
}
