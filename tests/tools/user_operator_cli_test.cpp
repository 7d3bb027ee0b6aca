// Operators declared in data, tuned end to end on PoCL from the CLI and a
// sweep plan, each against its user's reference: a planted flaw caught and
// named, a crashing reference reported while the sweep goes on, bad
// declarations refused in one line, and the printed rerun line reproducing
// the failure.
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "bindings/c/kforge.h"
#include "runtime/device/device_registry.hpp"
#include "runtime/lookup/lookup.hpp"
#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFast = " --min-reps 2 --max-reps 2 --quiet ";

/// tests/data/operators/NAME copied to DIR/AS (default NAME) with `library`
/// beside its operator.json, as a user keeps them; returns the directory.
std::string staged(const test::TempDir& dir, const std::string& name, const std::string& library = "",
                   const std::string& as = "") {
  const fs::path to = dir.path() / (as.empty() ? name : as);
  fs::create_directories(to);
  fs::copy(fs::path(KFORGE_TEST_DATA_DIR) / "operators" / name, to, fs::copy_options::recursive);
  if (!library.empty()) fs::copy_file(library, to / fs::path(library).filename());
  return to.string();
}

/// Rewrites DIR/FILE's JSON with `edit`.
template <typename Edit>
void edit_json(const std::string& dir, const std::string& file, Edit edit) {
  const std::string path = dir + "/" + file;
  json j = json::parse(test::read_file(path));
  edit(j);
  std::ofstream(path) << j.dump(2);
}

/// Replaces every `from` with `to` in DIR/FILE.
void replace_in(const std::string& dir, const std::string& file, const std::string& from, const std::string& to) {
  std::string text = test::read_file(dir + "/" + file);
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  std::ofstream(dir + "/" + file) << text;
}

/// Runs `statement` on the database file `db` (tampering, as an attacker would).
void sql(const std::string& db, const std::string& statement) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, statement.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(h);
  REQUIRE(rc == SQLITE_OK);
}

json parse_json(const test::CommandResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 4));
  return json::parse(r.out);
}

json results_in(const std::string& db) {
  return parse_json(test::run_kforge("show --results --json --db " + db))["results"];
}

/// Every FLAW1 result is a wrong result naming its template and
/// configuration (and `where`, when given); every other one is ok.
void check_flaws_caught(const json& results, const std::string& tpl, const std::string& where = "") {
  REQUIRE(!results.empty());
  for (const auto& r : results) {
    const std::string config = r["config"];
    INFO(config << " " << r["status"] << ": " << r["reason"]);
    if (config.find("FLAW1") == std::string::npos) {
      CHECK(r["status"] == "ok");
      continue;
    }
    CHECK(r["status"] == "wrong_result");
    const std::string reason = r["reason"];
    CHECK(reason.find("template " + tpl + " config " + config) != std::string::npos);
    if (!where.empty()) CHECK(reason.find(where) != std::string::npos);
  }
}

/// Tunes every configuration of `tpl` into DIR/DB: `evaluated` candidates,
/// `failed` of them, and every FLAW1 one caught and named with `where`.
void check_tune_catches(const test::TempDir& dir, const std::string& tpl, const std::string& db,
                        const std::string& name, int evaluated, int failed, const std::string& where) {
  auto t = parse_json(test::run_kforge("tune --template " + tpl + " --strategy exhaustive" + kFast +
                                       "--json --db " + dir.file(db)));
  CHECK(t["evaluated"] == evaluated);
  CHECK(t["failed"] == failed);
  check_flaws_caught(results_in(dir.file(db)), name, where);
}

/// Switches `tpl`'s reference to its reference/ template in `config`, then
/// check_tune_catches, the failures naming that template.
void check_reference_template(const test::TempDir& dir, const std::string& tpl, const std::string& name,
                              const std::string& config, int evaluated, int failed) {
  edit_json(tpl, "operator.json", [&](json& j) {
    j["reference"] = {{"template", "reference"}, {"config", config}};
  });
  check_tune_catches(dir, tpl, "tpl.db", name, evaluated, failed,
                     "; reference: reference template " + tpl + "/reference config " + config);
}

}  // namespace

TEST_CASE("saxpy, declared in data, is tuned against its reference library", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string db = dir.file("u.db");
  auto t = parse_json(test::run_kforge(
      "tune --template " + tpl + " --shape n=1001 --strategy exhaustive --db " + db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);
  CHECK(t["failed"] == 4);
  CHECK(t["winner"]["template"] == "saxpy_blocked");
  CHECK(t["winner"]["config"].get<std::string>().find("FLAW0") != std::string::npos);
  // The last element is left unchanged: inout, so its initial value is wrong.
  check_flaws_caught(results_in(db), "saxpy_blocked", "first bad index 1000 (1 bad)");
  check_flaws_caught(results_in(db), "saxpy_blocked",
                     "; reference: library " + tpl + "/saxpy_reference.so symbol saxpy_reference; rerun: ");
}

TEST_CASE("a scalar declared f32 for the kernel's int fails every candidate, naming both", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  edit_json(tpl, "operator.json", [](json& j) { j["arguments"][0]["type"] = "f32"; });
  const std::string db = dir.file("u.db");
  const auto r = test::run_kforge("tune --template " + tpl + " --shape n=1001 --strategy exhaustive --db " + db +
                                  kFast + "--json");
  CHECK(r.exit_code == 4);  // no candidate passed
  const auto results = results_in(db);
  REQUIRE(results.size() == 8);
  for (const auto& row : results) {
    INFO(row.dump());
    CHECK(row["status"] == "launch_error");
    CHECK(row["reason"].get<std::string>().find("argument 0 'n' is declared f32, but parameter 0 of kernel") !=
          std::string::npos);
  }
}

TEST_CASE("a 2-D stencil with a halo is checked against expected .npy outputs", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "stencil5");
  const std::string db = dir.file("s.db");
  // No --shape: the declaration's default problem, the one its files hold (13 x 21: tails in both
  // dimensions).
  auto t = parse_json(
      test::run_kforge("tune --template " + tpl + " --strategy exhaustive --db " + db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);
  CHECK(t["failed"] == 4);
  CHECK(t["winner"]["template"] == "stencil5_tiled");
  check_flaws_caught(results_in(db), "stencil5_tiled", "problem stencil5/H=13,W=21/f32/NN");
}

TEST_CASE("data sized for the tuned problem, not the default one, is checked against the tuned problem",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "stencil5");
  // The files hold 13 x 21; the default problem says 12 x 21.
  edit_json(tpl, "operator.json", [](json& j) { j["default_problem"] = {{"H", 12}, {"W", 21}}; });
  const std::string db = dir.file("s.db");
  auto t = parse_json(test::run_kforge("tune --template " + tpl + " --shape H=13,W=21 --strategy exhaustive --db " +
                                       db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);
  CHECK(t["failed"] == 4);
  const auto other = test::run_kforge("tune --template " + tpl + " --shape H=11,W=21 --db " + db + kFast);
  CHECK(other.exit_code == 2);
  CHECK_THAT(other.err, Catch::Contains("x.npy: shape (345,) holds 345 elements") &&
                            Catch::Contains("is 299 for H=11,W=21"));
}

TEST_CASE("the stencil is checked as well against a reference library and a reference template",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "stencil5", KFORGE_STENCIL5_REFERENCE);
  edit_json(tpl, "operator.json", [](json& j) {
    j["reference"] = {{"library", "stencil5_reference.so"}, {"symbol", "stencil5_reference"}};
  });
  check_tune_catches(dir, tpl, "lib.db", "stencil5_tiled", 8, 4, "; reference: library " + tpl);
  check_reference_template(dir, tpl, "stencil5_tiled", "ROWS1", 8, 4);
}

TEST_CASE("saxpy against expected .npy outputs and a reference template", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy");
  // The default problem, n = 1000, with inputs and the expected y from files.
  edit_json(tpl, "operator.json", [](json& j) {
    j["arguments"][2]["init"] = {{"kind", "npy"}, {"file", "x.npy"}};
    j["arguments"][3]["init"] = {{"kind", "npy"}, {"file", "y0.npy"}};
    j["reference"] = {{"expected", {{"y", "y_expected.npy"}}}};
  });
  check_tune_catches(dir, tpl, "npy.db", "saxpy_blocked", 8, 4, "first bad index 999 (1 bad)");
  check_reference_template(dir, tpl, "saxpy_blocked", "BLOCK1", 8, 4);
}

TEST_CASE("the two-output operator against expected .npy outputs", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "rowstats");
  edit_json(tpl, "operator.json", [](json& j) {
    j["arguments"][3]["init"] = {{"kind", "npy"}, {"file", "x.npy"}};
    j["reference"] = {{"expected", {{"scaled", "scaled_expected.npy"}, {"rowsum", "rowsum_expected.npy"}}}};
  });
  check_tune_catches(dir, tpl, "r.db", "rowstats_rowwise", 4, 2, "(output rowsum element 18)");
}

TEST_CASE("an operator with two outputs names the output an unwritten element is in", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "rowstats", KFORGE_ROWSTATS_REFERENCE);
  const std::string db = dir.file("r.db");
  auto t = parse_json(
      test::run_kforge("tune --template " + tpl + " --strategy exhaustive --db " + db + kFast + "--json"));
  CHECK(t["evaluated"] == 4);
  CHECK(t["failed"] == 2);
  // rows = 19: the last row's sum is poisoned and never written.
  check_flaws_caught(results_in(db), "rowstats_rowwise", "value nan reference");
  check_flaws_caught(results_in(db), "rowstats_rowwise", "(output rowsum element 18)");
}

TEST_CASE("the rerun line of a user operator's failure reproduces it when pasted", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string db = dir.file("u.db");
  parse_json(test::run_kforge("tune --template " + tpl +
                              " --shape n=77 --config BLOCK32_FLAW1_PERTHREAD4 --db " + db + kFast +
                              "--json"));
  const json results = results_in(db);
  REQUIRE(results.size() == 1);
  const std::string reason = results[0]["reason"];
  const std::size_t at = reason.find("rerun: kforge ");
  REQUIRE(at != std::string::npos);
  const std::string rerun = reason.substr(at + std::string("rerun: kforge ").size());
  INFO(rerun);
  CHECK(rerun.find("--template " + tpl) != std::string::npos);
  CHECK(rerun.find("--db " + db) != std::string::npos);
  // The full reason, rerun line included, in the text of show --results too.
  auto shown = test::run_kforge("show --results --db " + db);
  CHECK(shown.exit_code == 0);
  CHECK(shown.out.find("full reasons:\nsaxpy_blocked BLOCK32_FLAW1_PERTHREAD4: " + reason + "\n") != std::string::npos);
  // Into the same database: run again, not the stored failure reported;
  // it fails again the same way, and the row is replaced, not doubled.
  sql(db, "UPDATE results SET reason = 'stored long ago'");
  auto again = test::run_kforge(rerun + " --json" + kFast);
  INFO(again.err);
  CHECK(again.exit_code == 4);
  const json rerun_json = json::parse(again.out);
  CHECK(rerun_json["failed"] == 1);
  CHECK(rerun_json["evaluated_now"] == 1);
  CHECK(rerun_json["reused"] == 0);
  const json rerun_results = results_in(db);
  REQUIRE(rerun_results.size() == 1);
  CHECK(rerun_results[0]["reason"] == reason);
  // Into a fresh one: evaluated again, and it fails again the same way.
  const std::string fresh = dir.file("fresh.db");
  const std::string elsewhere = rerun.substr(0, rerun.find("--db ")) + "--db " + fresh +
                                rerun.substr(rerun.find("--db ") + 5 + db.size());
  auto evaluated = test::run_kforge(elsewhere + " --json" + kFast);
  INFO(evaluated.err);
  CHECK(evaluated.exit_code == 4);
  const json fresh_results = results_in(fresh);
  REQUIRE(fresh_results.size() == 1);
  CHECK(fresh_results[0]["status"] == "wrong_result");
  CHECK(fresh_results[0]["reason"].get<std::string>().find(reason.substr(0, reason.find(" rerun:"))) == 0);
}

TEST_CASE("a reference library's constructor runs only in a process of its own", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_HOSTILE_REFERENCE);
  edit_json(tpl, "operator.json", [](json& j) { j["reference"]["library"] = "hostile_reference.so"; });
  // Unprovoked, the library is an ordinary reference: the template loads.
  auto plain = test::run_kforge("templates --template " + tpl);
  INFO(plain.err);
  CHECK(plain.exit_code == 0);
  // A constructor that crashes kills the probe, not kforge: exit 2 naming the field.
  ::setenv("KFORGE_TEST_HOSTILE", "crash", 1);
  auto crash = test::run_kforge("templates --template " + tpl);
  INFO(crash.err);
  CHECK(crash.exit_code == 2);
  CHECK(crash.err.find("reference.library: '") != std::string::npos);
  CHECK(crash.err.find("loading it was killed by signal 11") != std::string::npos);
  // One that calls exit(0) does not make kforge exit 0 having done nothing.
  ::setenv("KFORGE_TEST_HOSTILE", "exit", 1);
  auto quit = test::run_kforge("templates --template " + tpl);
  ::unsetenv("KFORGE_TEST_HOSTILE");
  INFO(quit.err);
  CHECK(quit.exit_code == 2);
  CHECK(quit.err.find("loading it ended the process (exit status 0) before it could be used") != std::string::npos);
}

TEST_CASE("a reference that never returns fails its tune within --reference-timeout, named", "[cli][declared]") {
  test::TempDir dir;
  const std::string hang = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "hang");
  edit_json(hang, "operator.json", [](json& j) {
    j["name"] = "saxpy_hang";
    j["reference"]["symbol"] = "hanging_reference";
  });
  edit_json(hang, "manifest.json", [](json& j) {
    j["name"] = "saxpy_hang_blocked";
    j["operator"] = "saxpy_hang";
  });
  // Unbounded, this would wait out the 600 s setup limit (the test's own timeout catches that).
  auto r = test::run_kforge("tune --template " + hang + " --shape n=64 --reference-timeout 2 --db " +
                            dir.file("h.db") + kFast);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("the reference (") != std::string::npos);
  CHECK(r.err.find("hanging_reference) did not return within 2 s") != std::string::npos);
}

TEST_CASE("a reference library that crashes is named, and a sweep goes on past it", "[cli][declared]") {
  test::TempDir dir;
  const std::string good = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string crash = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "crash");
  edit_json(crash, "operator.json", [](json& j) {
    j["name"] = "saxpy_crash";
    j["reference"]["symbol"] = "crashing_reference";
  });
  edit_json(crash, "manifest.json", [](json& j) {
    j["name"] = "saxpy_crash_blocked";
    j["operator"] = "saxpy_crash";
  });
  auto alone =
      test::run_kforge("tune --template " + crash + " --shape n=64 --db " + dir.file("c.db") + kFast);
  INFO(alone.err);
  CHECK(alone.exit_code == 1);
  CHECK(alone.err.find("crashing_reference") != std::string::npos);
  CHECK(alone.err.find("did not return") != std::string::npos);

  const std::string plan = dir.file("plan.json");
  std::ofstream(plan) << R"({"schema_version": 1, "name": "user-ops",
    "budget": {"strategy": "exhaustive", "min_reps": 2, "max_reps": 2},
    "entries": [{"op": "saxpy_crash", "shapes": ["n=64"]}, {"op": "saxpy", "shapes": ["n=64"]}]})";
  auto sweep = test::run_kforge("sweep " + plan + " --template " + crash + " --template " + good + " --db " +
                                dir.file("sweep.db") + " --json --quiet");
  INFO(sweep.out << sweep.err);
  const json j = json::parse(sweep.out);
  REQUIRE(j["tasks"].size() == 2);
  CHECK(j["tasks"][0]["state"] == "error");
  CHECK(j["tasks"][0]["error"].get<std::string>().find("crashing_reference") != std::string::npos);
  CHECK(j["tasks"][1]["winner"]["template"] == "saxpy_blocked");
}

TEST_CASE("a kernel's own lower-case tunables are tuned under their names", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  for (const char* file : {"manifest.json", "saxpy.c"}) {
    replace_in(tpl, file, "PERTHREAD", "per_thread");
    replace_in(tpl, file, "BLOCK", "block_size_x");
    replace_in(tpl, file, "KF_block_size_x_X", "KF_BLOCK_X");  // the prelude's, not the tunable
  }
  const std::string db = dir.file("u.db");
  auto t = parse_json(test::run_kforge("tune --template " + tpl + " --shape n=300 --strategy exhaustive --db " +
                                       db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);
  CHECK(t["failed"] == 4);
  CHECK(t["winner"]["config"].get<std::string>().find("FLAW0_block_size_x") == 0);
  check_flaws_caught(results_in(db), "saxpy_blocked", "(first validation run, untimed): ");
  for (const auto& r : results_in(db)) CHECK(r["reason"].get<std::string>().find("accumulate") == std::string::npos);
  auto one = test::run_kforge("tune --template " + tpl + " --shape n=300 --config FLAW0_block_size_x32_per_thread4" +
                              " --db " + dir.file("one.db") + kFast);
  INFO(one.err);
  CHECK(one.exit_code == 0);
}

TEST_CASE("names that shadow the prelude or a device limit exit 2 naming the field", "[cli][declared]") {
  test::TempDir dir;
  const std::string attr = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "attr");
  edit_json(attr, "operator.json", [](json& j) {
    j["attributes"] = json::parse(R"([{"name": "thread_x", "values": ["a", "b"]}])");
  });
  auto a = test::run_kforge("tune --template " + attr + " --db " + dir.file("x.db") + kFast);
  INFO(a.err);
  CHECK(a.exit_code == 2);
  CHECK(a.err.find(attr + "/operator.json: attributes[0].name: 'thread_x' is reserved: its macro KF_THREAD_X") !=
        std::string::npos);
  const std::string dim = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "dim");
  edit_json(dim, "manifest.json",
            [](json& j) { j["parameters"][0]["name"] = "max_block_threads"; });
  auto d = test::run_kforge("templates --template " + dim);
  INFO(d.err);
  CHECK(d.exit_code == 2);
  CHECK(d.err.find(dim + "/manifest.json: parameters[0].name: 'max_block_threads' is reserved") !=
        std::string::npos);
}

TEST_CASE("a size the kernel fixes at compile time is a parameter the envelope ties to the problem",
          "[cli][declared]") {
  // docs/user-operators.md, "A size fixed at compile time".
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  replace_in(tpl, "saxpy.c", "if (i < n - FLAW)", "if (i < size_n - FLAW)");
  edit_json(tpl, "manifest.json", [](json& j) {
    j["parameters"].push_back({{"name", "size_n"}, {"values", {64, 300}}, {"default", 64}});
    j["envelope"] = {"size_n == n"};
  });
  const std::string db = dir.file("u.db");
  auto t = parse_json(test::run_kforge("tune --template " + tpl + " --shape n=300 --strategy exhaustive --db " +
                                       db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);  // of 16: the 8 with size_n 300
  CHECK(t["failed"] == 4);
  for (const auto& r : results_in(db)) CHECK(r["config"].get<std::string>().find("size_n300") != std::string::npos);
  check_flaws_caught(results_in(db), "saxpy_blocked");
  auto none = test::run_kforge("tune --template " + tpl + " --shape n=100 --db " + dir.file("n.db") + kFast);
  INFO(none.err);
  CHECK(none.exit_code != 0);  // no configuration is valid for n=100
}

TEST_CASE("a kernel's compiler warnings stay in the compile log, never a bare count on stderr",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  replace_in(tpl, "saxpy.c", "KF_KERNEL void", "#warning kforge-test-warning\nKF_KERNEL void");
  const std::string db = dir.file("w.db");
  // PoCL reports no build log for a program its own kernel cache answers:
  // a cache of this test's own, no binary cache and no code generators (which
  // build ahead into that cache) make this compile the first of its program.
  setenv("POCL_CACHE_DIR", dir.file("pocl-cache").c_str(), 1);
  auto t = test::run_kforge("tune --template " + tpl + " --shape n=64 --config BLOCK32_FLAW0_PERTHREAD1 --db " + db +
                            " --min-reps 2 --max-reps 2 --json --no-cache --compile-threads 1");
  unsetenv("POCL_CACHE_DIR");
  INFO(t.err);
  CHECK(parse_json(t)["failed"] == 0);
  CHECK(t.err.find("generated.") == std::string::npos);
  const json results = results_in(db);
  REQUIRE(results.size() == 1);
  CHECK(results[0]["compile_log"].get<std::string>().find("kforge-test-warning") != std::string::npos);
}

TEST_CASE("tune --json gives its progress on stderr, as JSON lines when asked", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string tune = "tune --template " + tpl + " --shape n=64 --strategy exhaustive --min-reps 2 --max-reps 2 --json";
  auto text = test::run_kforge(tune + " --db " + dir.file("t.db"));
  INFO(text.err);
  CHECK(parse_json(text)["evaluated"] == 8);
  CHECK(text.err.find("[8/8] saxpy_blocked ") != std::string::npos);
  auto lines = test::run_kforge(tune + " --progress json --db " + dir.file("j.db"));
  CHECK(parse_json(lines)["evaluated"] == 8);
  std::istringstream err(lines.err);
  std::map<std::string, int> events;
  for (std::string line; std::getline(err, line);) {
    INFO(line);
    const json e = json::parse(line);  // every line a JSON object
    ++events[e.at("event").get<std::string>()];
    if (e["event"] == "candidate") {
      CHECK(e["total"] == 8);
      CHECK(e.contains(e["status"] == "ok" ? "median_ms" : "reason"));
    }
  }
  CHECK(events["start"] == 1);
  CHECK(events["candidate"] == 8);
  CHECK(events["done"] == 1);
  CHECK(test::run_kforge(tune + " --progress yaml --db " + dir.file("y.db")).exit_code == 2);
}

TEST_CASE("a kernel not named KF_KERNEL_NAME is refused when its directory loads", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  replace_in(tpl, "saxpy.c", "KF_KERNEL void KF_KERNEL_NAME(", "KF_KERNEL void saxpy_blocked(");
  for (const std::string& command :
       {"templates --template " + tpl, "tune --shape n=64 --template " + tpl + " --db " + dir.file("x.db") + kFast}) {
    auto r = test::run_kforge(command);
    INFO(command << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(tpl + "/saxpy.c: the kernel must be named KF_KERNEL_NAME") != std::string::npos);
    CHECK(r.err.find("it names 'saxpy_blocked', the manifest's kernel") != std::string::npos);
  }
}

TEST_CASE("bad operator declarations exit 2 with one line naming file, field and value", "[cli][declared]") {
  test::TempDir dir;
  auto refused = [&](const std::string& tpl, const std::vector<std::string>& parts) {
    auto r = test::run_kforge("tune --template " + tpl + " --db " + dir.file("x.db") + kFast);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(tpl + "/operator.json: ") != std::string::npos);
    for (const auto& p : parts) CHECK(r.err.find(p) != std::string::npos);
  };
  const std::string role = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "role");
  edit_json(role, "operator.json", [](json& j) { j["arguments"][2]["role"] = "sideways"; });
  refused(role, {"arguments[2].role", "'sideways'"});

  const std::string symbol = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE, "symbol");
  edit_json(symbol, "operator.json", [](json& j) { j["reference"]["symbol"] = "no_such_symbol"; });
  refused(symbol, {"reference.symbol", "'no_such_symbol' is not exported by"});

  const std::string nolib = staged(dir, "saxpy", "", "nolib");  // the library never built beside it
  refused(nolib, {"reference.library", "'saxpy_reference.so': no such file"});
}

TEST_CASE("a tuned user operator is selected and launched by argument name from C++ and C",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string db = dir.file("u.db");
  parse_json(test::run_kforge("tune --template " + tpl + " --shape n=1001 --strategy exhaustive --db " + db +
                              kFast + "--json"));
  const int n = 1001;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.25f * static_cast<float>(i % 7);
    y[i] = 1.0f - 0.5f * static_cast<float>(i % 3);
  }
  auto expect = [&](const std::vector<float>& out) {
    for (int i = 0; i < n; ++i) {
      INFO(i);
      REQUIRE(out[i] == 2.0f * x[i] + y[i]);
    }
  };

  SECTION("C++") {
    auto device = open_device("auto");
    REQUIRE(device.ok());
    auto catalog = TemplateCatalog::builtin();
    REQUIRE(catalog.ok());
    REQUIRE(catalog->add_dir(tpl).ok());
    auto lookup = Lookup::open(db, **device, std::move(*catalog));
    REQUIRE(lookup.ok());
    Problem problem;
    problem.op = "saxpy";
    problem.dims = {{"n", n}};
    auto sel = (*lookup)->select(problem);
    REQUIRE(sel.ok());
    INFO(sel->explanation);
    CHECK(sel->rule == SelectionRule::kExact);
    CHECK(sel->template_name == "saxpy_blocked");
    CHECK(sel->config.find("FLAW0") != std::string::npos);
    auto bx = (*device)->allocate(n * 4);
    auto by = (*device)->allocate(n * 4);
    REQUIRE((bx.ok() && by.ok()));
    REQUIRE((*device)->write(**bx, x.data(), n * 4).ok());
    REQUIRE((*device)->write(**by, y.data(), n * 4).ok());
    auto ran = (*lookup)->launch_named(*sel, {{"y", KernelArg::of(**by)},
                                              {"x", KernelArg::of(**bx)},
                                              {"a", KernelArg::of(2.0f)},
                                              {"n", KernelArg::of(n)}});
    INFO((ran.ok() ? "" : ran.error().message));
    REQUIRE(ran.ok());
    std::vector<float> out(n);
    REQUIRE((*device)->read(**by, out.data(), n * 4).ok());
    expect(out);
    auto missing = (*lookup)->launch_named(*sel, {{"x", KernelArg::of(**bx)}, {"a", KernelArg::of(2.0f)}});
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message == "launch saxpy: argument 'n' is missing (n, a, x, y)");
  }

  SECTION("C") {
    kforge_options options;
    kforge_options_init(&options);
    const char* dirs[] = {tpl.c_str()};
    options.user_db = db.c_str();
    options.template_dirs = dirs;
    options.num_template_dirs = 1;
    kforge_lookup* lookup = nullptr;
    REQUIRE(kforge_open(&options, &lookup) == KFORGE_OK);
    const kforge_dim dims[] = {{"n", n}};
    const kforge_problem problem = {"saxpy", dims, 1, "f32", "NN"};
    const kforge_selection* sel = nullptr;
    REQUIRE(kforge_select(lookup, &problem, &sel) == KFORGE_OK);
    CHECK(std::string(kforge_selection_rule(sel)) == "exact");
    kforge_buffer *bx = nullptr, *by = nullptr;
    REQUIRE(kforge_buffer_create(lookup, n * 4, &bx) == KFORGE_OK);
    REQUIRE(kforge_buffer_create(lookup, n * 4, &by) == KFORGE_OK);
    REQUIRE(kforge_buffer_write(lookup, bx, x.data(), n * 4) == KFORGE_OK);
    REQUIRE(kforge_buffer_write(lookup, by, y.data(), n * 4) == KFORGE_OK);
    const char* names[] = {"x", "y", "n", "a"};
    kforge_arg args[4] = {};
    args[0].kind = KFORGE_ARG_BUFFER;
    args[0].buffer = bx;
    args[1].kind = KFORGE_ARG_BUFFER;
    args[1].buffer = by;
    args[2].kind = KFORGE_ARG_INT32;
    args[2].i32 = n;
    args[3].kind = KFORGE_ARG_FLOAT32;
    args[3].f32 = 2.0f;
    double ms = 0;
    INFO(kforge_last_error());
    REQUIRE(kforge_launch_named(lookup, sel, names, args, 4, &ms) == KFORGE_OK);
    std::vector<float> out(n);
    REQUIRE(kforge_buffer_read(lookup, by, out.data(), n * 4) == KFORGE_OK);
    expect(out);
    const char* wrong[] = {"x", "y", "n", "alpha"};
    CHECK(kforge_launch_named(lookup, sel, wrong, args, 4, &ms) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()).find("no argument named 'alpha'") != std::string::npos);
    kforge_buffer_destroy(bx);
    kforge_buffer_destroy(by);
    kforge_close(lookup);
  }
}

TEST_CASE("a user operator's stored winner: tampered rows skipped, a changed declaration stale",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "saxpy", KFORGE_SAXPY_REFERENCE);
  const std::string db = dir.file("u.db");
  parse_json(test::run_kforge("tune --template " + tpl + " --shape n=1001 --strategy exhaustive --db " + db +
                              kFast + "--json"));
  const std::string lookup = "lookup --template " + tpl + " --shape n=1001 --json --db " + db;
  const json tuned = parse_json(test::run_kforge(lookup));
  CHECK(tuned["rule"] == "exact");

  SECTION("a configuration the manifest does not declare is skipped") {
    sql(db, "UPDATE winners SET config = 'BLOCK48_FLAW0_PERTHREAD1'");
    const json j = parse_json(test::run_kforge(lookup));
    INFO(j.dump(1));
    CHECK(j["rule"] != "exact");
    CHECK(j["explanation"].dump().find("BLOCK48_FLAW0_PERTHREAD1") != std::string::npos);
  }
  SECTION("a changed declaration makes the stored results stale") {
    edit_json(tpl, "operator.json", [](json& j) { j["arguments"][3]["tolerance"]["abs"] = 2e-6; });
    const json j = parse_json(test::run_kforge(lookup));
    INFO(j.dump(1));
    CHECK(j["rule"] == "default");
    CHECK(j["explanation"].dump().find("stale") != std::string::npos);
  }
}

TEST_CASE("export, report, capabilities and compare read a user operator's database", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "rowstats", KFORGE_ROWSTATS_REFERENCE);
  const std::string db = dir.file("r.db");
  parse_json(
      test::run_kforge("tune --template " + tpl + " --strategy exhaustive --db " + db + kFast + "--json"));
  for (const char* format : {"json", "csv", "markdown", "header"}) {
    auto r = test::run_kforge("export --db " + db + " --template " + tpl + " --format " + format);
    INFO(format << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("rowstats_rowwise") != std::string::npos);
    CHECK(r.out.find("FLAW0_ROWS") != std::string::npos);
  }
  const std::string html = dir.file("r.html");
  auto report = test::run_kforge("report --db " + db + " --template " + tpl + " --out " + html);
  INFO(report.err);
  CHECK(report.exit_code == 0);
  CHECK(test::read_file(html).find("rowstats/cols=37,rows=19/f32/NN") != std::string::npos);
  auto caps = test::run_kforge("capabilities --db " + db + " --template " + tpl + " --json");
  INFO(caps.err);
  REQUIRE(caps.exit_code == 0);
  CHECK(caps.out.find("\"rowstats\"") != std::string::npos);
  CHECK(caps.out.find("rowstats_rowwise") != std::string::npos);
  auto same = test::run_kforge("compare " + db + " " + db + " --json");
  INFO(same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("rowstats") != std::string::npos);
}

TEST_CASE("a reference template run on the device validates a user operator", "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "rowstats");
  edit_json(tpl, "operator.json", [](json& j) {
    j["reference"] = {{"template", "reference"}, {"config", "ROWS1"}};
  });
  const std::string db = dir.file("r.db");
  auto t = parse_json(
      test::run_kforge("tune --template " + tpl + " --strategy exhaustive --db " + db + kFast + "--json"));
  CHECK(t["evaluated"] == 4);
  CHECK(t["failed"] == 2);
  check_flaws_caught(results_in(db), "rowstats_rowwise", "(output rowsum element 18)");

  // A configuration the reference template does not declare: exit 2, naming the field.
  edit_json(tpl, "operator.json", [](json& j) { j["reference"]["config"] = "ROWS2"; });
  auto bad = test::run_kforge("tune --template " + tpl + " --db " + dir.file("x.db") + kFast);
  INFO(bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(tpl + "/operator.json: reference.config: ") != std::string::npos);
  CHECK(bad.err.find("ROWS") != std::string::npos);
}

TEST_CASE("two templates share one declaration that their manifests name", "[cli][declared]") {
  test::TempDir dir;
  const std::string a = staged(dir, "saxpy", "", "shared/a");
  const std::string b = staged(dir, "saxpy", "", "shared/b");
  fs::rename(a + "/operator.json", dir.file("shared/saxpy.json"));
  fs::remove(b + "/operator.json");
  fs::copy_file(KFORGE_SAXPY_REFERENCE, dir.file("shared/saxpy_reference.so"));
  edit_json(a, "manifest.json", [](json& j) { j["operator_declaration"] = "../saxpy.json"; });
  edit_json(b, "manifest.json", [](json& j) {
    j["operator_declaration"] = "../saxpy.json";
    j["name"] = "saxpy_other";
  });
  const std::string db = dir.file("u.db");
  auto t = parse_json(test::run_kforge("tune --template " + a + " --template " + b +
                                       " --shape n=100 --strategy exhaustive --db " + db + kFast + "--json"));
  CHECK(t["evaluated"] == 16);
  CHECK(t["failed"] == 8);

  edit_json(b, "manifest.json", [](json& j) { j["operator_declaration"] = "../missing.json"; });
  auto missing = test::run_kforge("tune --template " + b + " --db " + db + kFast);
  INFO(missing.err);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(b + "/manifest.json: operator_declaration: '../missing.json': no such file") !=
        std::string::npos);
}

TEST_CASE("integer and f16 outputs are checked exactly and in f16 ulps, against f64 references",
          "[cli][declared]") {
  test::TempDir dir;
  const std::string tpl = staged(dir, "quantize", KFORGE_QUANTIZE_REFERENCE);
  // FLAW1 truncates: the i8 output q is wrong first, named as such.
  check_tune_catches(dir, tpl, "lib.db", "quantize_gather", 4, 2, "(output q element ");
  check_reference_template(dir, tpl, "quantize_gather", "BLOCK1", 4, 2);
  // PoCL has f64, so the reference template computed in it, and says so.
  for (const auto& r : results_in(dir.file("tpl.db"))) {
    if (r["status"] == "ok") continue;
    CHECK(r["reason"].get<std::string>().find(", computed in f64 on the device; rerun: ") !=
          std::string::npos);
  }
  // Only the f16 output rounded toward zero: caught by the half-ulp tolerance.
  const std::string src = tpl + "/quantize.c";
  std::string text = test::read_file(src);
  text.replace(text.find("q[i] = (char)s;  // truncates"), 29, "q[i] = (char)rint(s);");
  std::ofstream(src) << text;
  check_tune_catches(dir, tpl, "h.db", "quantize_gather", 4, 2, "(output h element ");

  // A reference template that stores float where kforge gives it kf_ref_t buffers is refused.
  const std::string ref = tpl + "/reference/quantize_simple.c";
  std::string body = test::read_file(ref);
  for (std::size_t at; (at = body.find("kf_ref_t")) != std::string::npos;) body.replace(at, 8, "float");
  std::ofstream(ref) << body;
  auto bad = test::run_kforge("tune --template " + tpl + " --db " + dir.file("x.db") + kFast);
  INFO(bad.err);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(tpl + "/operator.json: reference.template: quantize_simple") != std::string::npos);
  CHECK(bad.err.find("never names kf_ref_t") != std::string::npos);
}

TEST_CASE("the convolution example loads and tunes as its README says", "[cli][declared]") {
  test::TempDir dir;
  const std::string example = std::string(KFORGE_TEST_DATA_DIR) + "/../../examples/convolution";
  auto listed = test::run_kforge("templates --template " + example);
  INFO(listed.err);
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find("convolution_kernel") != std::string::npos);
  auto tuned = test::run_kforge("tune --template " + example + " --shape w=64,h=64,fw=17,fh=17 --max-evals 3 --db " +
                                dir.file("c.db") + kFast);
  INFO(tuned.err);
  CHECK(tuned.exit_code == 0);
  // A filter size the template was not compiled for: its envelope excludes every configuration, and says so.
  auto excluded = test::run_kforge("tune --template " + example + " --shape w=64,h=64,fw=5,fh=5 --db " +
                                   dir.file("c.db") + kFast);
  INFO(excluded.out << excluded.err);
  CHECK(excluded.exit_code == 4);
  CHECK(excluded.out.find("skipped convolution_kernel: no configuration is valid for convolution/") !=
        std::string::npos);
  CHECK(excluded.out.find("(the default fails envelope[0] 'filter_width == fw'): nothing to tune") !=
        std::string::npos);
}
