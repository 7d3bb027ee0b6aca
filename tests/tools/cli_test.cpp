// The CLI contract: JSON fields, exit codes, one-line errors that name the
// file, and nothing stored lost on bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";
const std::string kFast = " --min-reps 2 --max-reps 2 --quiet ";

/// The JSON of a command that ran to its end: exit 0, or 4 for a tune in
/// which no candidate passed (planted faults; input_cli_test.cpp checks 4).
json parse_json(const test::CommandResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 4));
  return json::parse(r.out);
}

int line_count(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

/// A short model search (6 candidates, seed 1) whose design is the same
/// whatever the timings; append the compile overlap and the database.
const std::string kModelSix = "tune --shape M=48,N=40,K=32 --strategy model --seed 1 --max-evals 6 "
                              "--compile-threads 2" + kFast + "--json --compile-overlap ";

json results_in(const std::string& db) {
  return parse_json(test::run_kforge("show --results --json --db " + db))["results"];
}

/// `kforge ARGS` with the worker made to abort while compiling `config` (or,
/// with KFORGE_FAULT_ABORT_GENERATING, a code generator at its launch; with
/// KFORGE_FAULT_ABORT_LAUNCHING, the measuring worker at its first launch).
json run_aborting_on(const std::string& config, const std::string& args,
                     const char* fault = "KFORGE_FAULT_ABORT_COMPILING") {
  test::ScopedEnv abort_on(fault, config);
  return parse_json(test::run_kforge(args));
}

/// Every result is ok but `faulty`'s, which is a crash.
void check_only_crash(const json& results, const std::string& faulty) {
  for (const auto& r : results) {
    INFO(r["config"] << " " << r["status"] << ": " << r["reason"]);
    CHECK(r["status"] == (r["config"] == faulty ? "crash" : "ok"));
  }
}

}  // namespace

TEST_CASE("devices --json lists the PoCL device with its fingerprint", "[cli]") {
  auto j = parse_json(test::run_kforge("devices --json"));
  REQUIRE(j.is_array());
  REQUIRE(!j.empty());
  for (const char* key : {"selector", "backend", "vendor", "name", "arch", "compute_units", "driver_version",
                          "compiler", "compiler_version"}) {
    INFO(key);
    CHECK(j[0].contains(key));
  }
  CHECK(j[0]["selector"] == "opencl:0");
}

TEST_CASE("templates --json lists the gemm template", "[cli]") {
  auto j = parse_json(test::run_kforge("templates --json"));
  auto it = std::find_if(j.begin(), j.end(), [](const json& t) { return t["name"] == "gemm_simt_tiled"; });
  REQUIRE(it != j.end());
  CHECK((*it)["operator"] == "gemm");
  CHECK((*it)["layouts"].size() == 4);
  CHECK((*it)["parameters"].size() >= 5);
}

TEST_CASE("tune, show and lookup through the CLI", "[cli]") {
  test::TempDir dir;
  const std::string db = dir.file("x.db");
  auto t = parse_json(test::run_kforge("tune --op gemm --shape M=48,N=40,K=32 --dtype f32 --max-evals 4 --db " +
                                       db + kFast + "--json"));
  CHECK(t["evaluated"] == 4);
  CHECK(t["failed"].is_number());
  REQUIRE(t["winner"].is_object());
  CHECK(t["winner"]["template"] == "gemm_simt_tiled");
  CHECK(t["winner"]["median_ms"].get<double>() > 0);
  REQUIRE(t["default"].is_object());
  CHECK(t["default"]["config"].is_string());
  CHECK(t["winner"]["median_ms"].get<double>() <= t["default"]["median_ms"].get<double>());

  auto show = parse_json(test::run_kforge("show --results --json --db " + db));
  CHECK(show["results"].size() == 4);
  CHECK(show["winners"].size() == 1);
  CHECK(show["devices"].size() == 1);

  auto exact = parse_json(test::run_kforge("lookup --json --shape M=48,N=40,K=32 --db " + db));
  CHECK(exact["rule"] == "exact");
  CHECK(exact["config"] == t["winner"]["config"]);
  CHECK(exact["explanation"].get<std::string>().find("exact") != std::string::npos);

  auto near = parse_json(test::run_kforge("lookup --json --shape M=50,N=41,K=32 --db " + db));
  CHECK(near["rule"] == "nearest");
  auto def = parse_json(test::run_kforge("lookup --json --shape M=48,N=40,K=32 --layout TN --db " + db));
  CHECK(def["rule"] == "default");
}

TEST_CASE("an unknown operator says a declared one needs its template directory", "[cli]") {
  test::TempDir dir;
  auto r = test::run_kforge("lookup --op convolution --shape w=256,h=256 --db " + dir.file("k.db"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--op: unknown operator 'convolution' (known: gemm") != std::string::npos);
  CHECK(r.err.find("an operator declared in a template directory needs --template DIR)") != std::string::npos);
}

TEST_CASE("tune --warm-start tries the nearest tuned problems' winners right after the default", "[cli]") {
  test::TempDir dir;
  const std::string db = " --db " + dir.file("w.db");
  const std::string a = "BK16_BM32_BN32_PAD0_TM4_TN2_VW4", b = "BK8_BM32_BN32_PAD0_TM2_TN4_VW2",
                    other_family = "BK8_BM32_BN64_PAD0_TM4_TN4_VW4";
  // Winners planted: A at 32^3 and B at 256^3; another layout's is not of the family; the
  // default at 48^3, nearest to 64^3, is proposed first anyway and takes no warm start's place.
  const std::string default_config = "BK8_BM32_BN32_PAD0_TM2_TN2_VW1";
  for (const auto& [shape, layout, config] :
       {std::tuple{"M=32,N=32,K=32", "NN", a}, std::tuple{"M=256,N=256,K=256", "NN", b},
        std::tuple{"M=64,N=64,K=64", "NT", other_family}, std::tuple{"M=48,N=48,K=48", "NN", default_config}}) {
    parse_json(test::run_kforge(std::string("tune --op gemm --shape ") + shape + " --layout " + layout +
                                " --config " + config + db + kFast + "--json"));
  }
  // The first proposals for a problem: its results in the order they were stored.
  auto first_three = [&](const std::string& problem) {
    std::vector<std::pair<std::int64_t, std::string>> rows;
    const json show = parse_json(test::run_kforge("show --results --json" + db));
    for (const auto& row : show["results"]) {
      if (row["problem"] == problem) rows.emplace_back(row["id"].get<std::int64_t>(), row["config"].get<std::string>());
    }
    std::sort(rows.begin(), rows.end());
    std::vector<std::string> configs;
    for (std::size_t i = 0; i < rows.size() && i < 3; ++i) configs.push_back(rows[i].second);
    return configs;
  };
  // In the order proposed: timing each batch fastest first would reorder them.
  const std::string fast = " --min-reps 2 --max-reps 2 --strategy random --max-evals 3 --strategy-order --json";

  // 64^3: log2 distance 3 to 32^3, 6 to 256^3.
  const json t = parse_json(test::run_kforge("tune --op gemm --shape M=64,N=64,K=64 --warm-start 2" + db + fast));
  REQUIRE(t["warm_starts"].size() == 2);
  CHECK(t["warm_starts"][0]["config"] == a);
  CHECK(t["warm_starts"][0]["from_problem"] == "gemm/K=32,M=32,N=32,batch=1/f32/NN");
  CHECK(t["warm_starts"][0]["log2_distance"].get<double>() == Approx(3.0));
  CHECK(t["warm_starts"][1]["config"] == b);
  CHECK(t["warm_starts"][1]["log2_distance"].get<double>() == Approx(6.0));
  const auto order = first_three("gemm/K=64,M=64,N=64,batch=1/f32/NN");
  REQUIRE(order.size() == 3);
  CHECK(order[0] == default_config);
  CHECK(order[1] == a);
  CHECK(order[2] == b);

  // 128^3, one warm start: 256^3 is nearer now (3 against 6).
  const json one = parse_json(test::run_kforge("tune --op gemm --shape M=128,N=128,K=128 --warm-start 1" + db + fast));
  REQUIRE(one["warm_starts"].size() == 1);
  CHECK(one["warm_starts"][0]["config"] == b);
  CHECK(first_three("gemm/K=128,M=128,N=128,batch=1/f32/NN").at(1) == b);

  // Without the flag, none.
  CHECK(parse_json(test::run_kforge("tune --op gemm --shape M=96,N=96,K=96" + db + fast))["warm_starts"].empty());
}

TEST_CASE("a user template is tuned without rebuilding and its flaw is reported", "[cli]") {
  test::TempDir dir;
  const std::string db = dir.file("u.db");
  auto t = parse_json(test::run_kforge("tune --template " + kPlanted + " --shape M=20,N=12,K=5 --strategy exhaustive --db " +
                                       db + kFast + "--json"));
  CHECK(t["evaluated"] == 8);
  CHECK(t["failed"] == 4);
  CHECK(t["winner"]["template"] == "gemm_naive_planted");
}

TEST_CASE("kforge --version names the revision the binary was built from", "[cli]") {
  // Taken at build time (cmake/WriteBuildVersion.cmake), so it follows new
  // commits without a new configure.
  const std::string source = std::string(KFORGE_TEST_DATA_DIR) + "/../..";
  std::string head;
  if (FILE* p = popen(("git -C " + source + " rev-parse --short=12 HEAD 2>/dev/null").c_str(), "r")) {
    char buf[64];
    while (std::fgets(buf, sizeof buf, p)) head += buf;
    pclose(p);
  }
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.pop_back();
  auto r = test::run_kforge("--version");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  if (head.empty()) {
    CHECK(r.out.find("(unknown") != std::string::npos);  // not a git checkout
  } else {
    CHECK(r.out.find("(" + head) != std::string::npos);
  }
}

TEST_CASE("the worker compiles ahead while measuring when told to, with the same outcomes", "[cli]") {
  test::TempDir dir;
  std::map<std::string, std::set<std::string>> by_mode;
  for (const std::string mode : {"on", "off"}) {
    const std::string db = dir.file(mode + ".db");
    auto t = parse_json(test::run_kforge("tune --template " + kPlanted +
                                         " --shape M=20,N=12,K=5 --strategy exhaustive --compile-threads 2 --no-cache"
                                         " --compile-overlap " + mode + " --db " + db + kFast + "--json"));
    CHECK(t["compile_overlap"] == (mode == "on"));
    // Code generators only where batches compile between timed runs, and
    // there each one's share of a batch is built as one program.
    CHECK((t["code_generators"] == 0) == (mode == "on"));
    CHECK(t["compiled_combined"] == (mode == "on" ? 0 : 8));
    CHECK(t["evaluated"] == 8);
    auto show = parse_json(test::run_kforge("show --results --json --db " + db));
    for (const auto& r : show["results"]) {
      by_mode[mode].insert(r["config"].get<std::string>() + " " + r["status"].get<std::string>());
    }
  }
  CHECK(by_mode["on"].size() == 8);
  CHECK(by_mode["on"] == by_mode["off"]);
}

TEST_CASE("the model's likely next candidates compile ahead, a compile that ends the worker blames no other",
          "[cli]") {
  test::TempDir dir;
  // Between timed runs (off), PoCL's two code generators build each batch:
  // the model's candidate and, on the other generator, its likeliest guess,
  // which is its design's next point, so at least that one was guessed.
  auto off = parse_json(test::run_kforge(kModelSix + "off --db " + dir.file("off.db")));
  CHECK(off["code_generators"] == 2);
  CHECK(off["compiled_ahead"] == 0);  // counted with overlap only
  CHECK(off["guessed_ahead"].get<int>() >= 1);
  CHECK(off["compile_ahead_stopped"].is_null());
  auto order = results_in(dir.file("off.db"));
  REQUIRE(order.size() == 6);
  // The model's second proposal is its design's (the same whatever the
  // timings), so with overlap on it is compiled ahead, during another
  // candidate's evaluation. Its compile brings the worker down.
  const std::string faulty = order[1]["config"];
  auto on = run_aborting_on(faulty, kModelSix + "on --db " + dir.file("on.db"));
  CHECK(on["evaluated"] == 6);
  CHECK(on["guessed_ahead"].get<int>() >= 1);  // at least the faulty one: guessed in the first window
  REQUIRE(on["compile_ahead_stopped"].is_string());
  CHECK(on["compile_ahead_stopped"].get<std::string>().find("Aborted") != std::string::npos);
  // The faulty candidate is the only crash: whoever was being evaluated when
  // the worker ended was evaluated again alone.
  auto results = results_in(dir.file("on.db"));
  REQUIRE(results.size() == 6);
  check_only_crash(results, faulty);
}

namespace {

/// One exhaustive batch of the planted template's eight candidates between
/// timed runs on PoCL: one group of eight (one program), built by one of the
/// two code generators, both of which launch them. The database's path goes last.
std::string planted_batch_args() {
  return "tune --template " + kPlanted +
         " --shape M=20,N=12,K=5 --strategy exhaustive --compile-threads 2 --no-cache"
         " --compile-overlap off" + kFast + "--json --db ";
}

/// A plain run of that batch into `db`: its summary and its results in order.
struct PlantedRun {
  json summary;
  json order;
};
PlantedRun run_planted_plain(const std::string& db) {
  PlantedRun r{parse_json(test::run_kforge(planted_batch_args() + db)), nullptr};
  REQUIRE(r.summary["evaluated"] == 8);
  r.order = results_in(db);
  REQUIRE(r.order.size() == 8);
  return r;
}

/// Every result ends as in `plain` (by configuration), but `crashed`'s, a crash.
void check_as_in(const json& plain, const json& results, const std::string& crashed = "") {
  std::map<std::string, std::string> expected;
  for (const auto& r : plain) expected[r["config"]] = r["status"];
  REQUIRE(results.size() == plain.size());
  for (const auto& r : results) {
    INFO(r["config"] << ": " << r["reason"]);
    CHECK(r["status"] == (r["config"] == crashed ? std::string("crash") : expected[r["config"]]));
  }
}

}  // namespace

TEST_CASE("on PoCL a code generator lost at a launch leaves the rest of its share to the other", "[cli]") {
  test::TempDir dir;
  const auto [plain, order] = run_planted_plain(dir.file("plain.db"));
  CHECK(plain["generated_ahead"] == 8);
  // The first launch brings its generator down. The other generates the
  // seven left, from the program the lost one built.
  const std::string faulty = order[0]["config"];
  auto t = run_aborting_on(faulty, planted_batch_args() + dir.file("faulty.db"), "KFORGE_FAULT_ABORT_GENERATING");
  CHECK(t["evaluated"] == 8);
  CHECK(t["generators_lost"] == 1);
  CHECK(t["generated_ahead"] == 7);
  CHECK(t["compiled_combined"] == 8);  // the group was built, and the measuring worker built it too
  // The fault is the generator's alone: measured in its own worker, every
  // candidate ends as in the plain run (the planted FLAW1 ones wrong, the rest ok).
  check_as_in(order, results_in(dir.file("faulty.db")));
}

TEST_CASE("on PoCL a worker restarted mid-batch builds the batch's shares again, whole, for the rest", "[cli]") {
  test::TempDir dir;
  const auto [plain, order] = run_planted_plain(dir.file("plain.db"));
  CHECK(plain["compiled_alone"] == 0);
  CHECK(plain["shares_rebuilt"] == 0);
  // The first candidate brings the measuring worker down at its first
  // launch. The new worker builds the batch's one share again, as it was,
  // instead of compiling seven candidates one at a time.
  const std::string faulty = order[0]["config"];
  auto t = run_aborting_on(faulty, planted_batch_args() + dir.file("faulty.db"), "KFORGE_FAULT_ABORT_LAUNCHING");
  CHECK(t["evaluated"] == 8);
  CHECK(t["worker_restarts"] == 1);
  CHECK(t["shares_rebuilt"] == 1);
  CHECK(t["compiled_alone"] == 0);
  check_as_in(order, results_in(dir.file("faulty.db")), faulty);

  // The last candidate brings it down: the finalists, evaluated by the
  // worker that died, are re-timed by a new one, which builds their shares
  // again rather than compiling each finalist on its own.
  const std::string last = order[7]["config"];
  auto late = run_aborting_on(last, planted_batch_args() + dir.file("late.db"), "KFORGE_FAULT_ABORT_LAUNCHING");
  CHECK(late["worker_restarts"] == 1);
  CHECK(late["finalists"].size() >= 2);
  CHECK(late["shares_rebuilt"].get<int>() >= 1);
  CHECK(late["compiled_alone"] == 0);
  check_as_in(order, results_in(dir.file("late.db")), last);
}

TEST_CASE("on PoCL a warm-started or partly stored exhaustive search builds the programs a plain one built", "[cli]") {
  test::TempDir dir;
  // PoCL keeps one cache entry per program: a directory two levels down.
  const std::string pocl = dir.file("pocl");
  auto programs = [&] {
    std::size_t n = 0;
    if (!std::filesystem::exists(pocl)) return n;
    for (const auto& top : std::filesystem::directory_iterator(pocl)) {
      if (!top.is_directory()) continue;
      for (const auto& entry : std::filesystem::directory_iterator(top.path())) n += entry.is_directory() ? 1 : 0;
    }
    return n;
  };
  test::ScopedEnv cache_dir("POCL_CACHE_DIR", pocl);
  // Proposals are checked in the order they were stored: timed in that order.
  std::string args = planted_batch_args();
  args.insert(args.rfind("--db "), "--strategy-order ");
  REQUIRE(parse_json(test::run_kforge(args + dir.file("plain.db")))["evaluated"] == 8);
  const auto order = results_in(dir.file("plain.db"));
  // Another shape's winner, the plain run's last good candidate, is
  // proposed right after the default: the candidates between move one place.
  std::size_t last_ok = 7;
  while (last_ok > 1 && order[last_ok]["status"] != "ok") --last_ok;
  REQUIRE(last_ok >= 2);
  const std::string moved = order[last_ok]["config"];
  auto other = test::run_kforge("tune --template " + kPlanted + " --shape M=24,N=12,K=5 --config " + moved +
                                " --no-cache" + kFast + "--db " + dir.file("warm.db"));
  REQUIRE(other.exit_code == 0);
  const std::size_t before = programs();
  auto warm = parse_json(test::run_kforge(args + dir.file("warm.db") + " --warm-start 1"));
  REQUIRE(warm["warm_starts"].size() == 1);
  CHECK(warm["warm_starts"][0]["config"] == moved);
  auto warm_order = results_in(dir.file("warm.db"));
  REQUIRE(warm_order.size() == 9);
  CHECK(warm_order[2]["config"] == moved);  // after the other shape's result and the default
  // The space's programs are its groups of consecutive configurations, the
  // same whatever the order of proposals: PoCL found them all.
  CHECK(warm["compiled_combined"] == 8);
  CHECK(programs() == before);

  // A run with one result stored already (the same shape, one configuration
  // tuned alone: a program of its own) evaluates the other seven, in the
  // program of all eight, which PoCL has.
  const std::string resumed = dir.file("resumed.db");
  auto one = test::run_kforge("tune --template " + kPlanted + " --shape M=20,N=12,K=5 --config " + moved +
                              " --no-cache" + kFast + "--db " + resumed);
  REQUIRE(one.exit_code == 0);
  const std::size_t with_one = programs();
  auto rest = parse_json(test::run_kforge(args + resumed));
  CHECK(rest["evaluated_now"] == 7);
  CHECK(rest["reused"] == 1);
  CHECK(rest["compiled_combined"] == 7);
  CHECK(programs() == with_one);
}

TEST_CASE("tune in a worker validates each batch first and times it fastest first", "[cli]") {
  // gemm_repeat: REP8 does 8 times REP1's work, and the default, a REP8, is
  // proposed first; validated with their batch, the REP1 are timed first.
  test::TempDir dir;
  const std::string tpl = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_repeat";
  const std::string args = "tune --template " + tpl +
                           " --shape M=128,N=128,K=128 --strategy exhaustive --compile-overlap off --no-cache"
                           " --min-reps 3 --max-reps 3 --json --db ";
  const json fast = parse_json(test::run_kforge(args + dir.file("fast.db")));
  CHECK(fast["validated_ahead"] == 6);
  auto order = results_in(dir.file("fast.db"));
  REQUIRE(order.size() == 6);
  for (const auto& r : order) CHECK(r["status"] == "ok");
  for (std::size_t i = 0; i < 3; ++i) CHECK(order[i]["config"].get<std::string>().find("REP1") != std::string::npos);
  // The default is the speedup's baseline: timed in full, never cut, and no
  // finalist (the three REP1 are); the other two REP8 are cut.
  // Other load (another test on the same cores) may have the default
  // re-timed beside the winner (docs/measurement.md, step 7): its count is
  // then its re-timing's.
  auto timed_in_full = [](const json& run) {
    REQUIRE(run["default"]["config"] == "BX8_REP8");
    CHECK(run["default"].value("reason", "").find("cut") == std::string::npos);
    for (const auto& f : run["finalists"]) {
      if (f["config"] == "BX8_REP8") {
        CHECK(run["retimed_for_load"].get<int>() + run["retimings"].get<int>() >= 1);
        CHECK(run["default"]["count"] == f["interleaved_count"]);
        return;
      }
    }
    CHECK(run["default"]["count"] == 3);
  };
  timed_in_full(fast);
  // --strategy-order times them as proposed: the default first, in full.
  CHECK(fast["timing_stops"].value("cut", 0) >= 2);
  const json proposed = parse_json(test::run_kforge(args + dir.file("order.db") + " --strategy-order"));
  CHECK(proposed["validated_ahead"] == 0);
  CHECK(results_in(dir.file("order.db"))[0]["config"] == "BX8_REP8");
  timed_in_full(proposed);
}

TEST_CASE("a tune without the window stop times candidates outside the finalist window too, and the sweep says so", "[cli]") {
  test::TempDir dir;
  const std::string args = "tune --shape M=48,N=40,K=32 --strategy random --seed 2 --max-evals 5 --min-reps 3"
                           " --max-reps 8 --no-cache --quiet --json --db ";
  auto protocol_of = [](const std::string& db) {
    auto opened = Database::open(db, Database::Mode::kReadOnly);
    REQUIRE(opened.ok());
    auto sweeps = (*opened)->sweeps();
    REQUIRE(sweeps.ok());
    REQUIRE(sweeps->size() == 1);
    return json::parse(sweeps->front().settings_json)["protocol"];
  };
  parse_json(test::run_kforge(args + dir.file("on.db")));
  CHECK(protocol_of(dir.file("on.db"))["stop_outside_window"] == true);
  const json off = parse_json(test::run_kforge(args + dir.file("off.db") + " --no-window-stop"));
  CHECK(protocol_of(dir.file("off.db"))["stop_outside_window"] == false);
  CHECK_FALSE(off["timing_stops"].contains("outside_window"));
}

TEST_CASE("on PoCL a group's program, built anyway, serves its member whose binary is stored", "[cli]") {
  // The first run stores its winner's binary. In the second, that
  // member's group is built all the same (the seven others are not stored),
  // and the member comes from it: its own stored program would have PoCL
  // generate its machine code again at its first launch.
  test::TempDir dir;
  std::string args = planted_batch_args();
  args.replace(args.find(" --no-cache"), std::string(" --no-cache").size(), " --cache-dir " + dir.file("cache"));
  const json first = parse_json(test::run_kforge(args + dir.file("a.db")));
  REQUIRE(first["evaluated"] == 8);
  auto entries = [&] {
    std::map<std::string, std::filesystem::file_time_type> written;
    for (const auto& f : std::filesystem::recursive_directory_iterator(dir.file("cache"))) {
      if (f.is_regular_file() && f.path().extension() == ".bin") written[f.path().string()] = f.last_write_time();
    }
    return written;
  };
  const auto stored = entries();
  REQUIRE(stored.size() == 1);
  const json second = parse_json(test::run_kforge(args + dir.file("b.db")));
  CHECK(second["cache_hits"] == 0);
  CHECK(second["compiled_combined"] == 8);
  // The first winner's binary is not built and written again (when the
  // second run names the same winner; another one is stored beside it).
  const auto after = entries();
  REQUIRE(after.count(stored.begin()->first) == 1);
  CHECK(after.at(stored.begin()->first) == stored.begin()->second);
  // Compiled one at a time, the stored binary serves.
  args.replace(args.find("--compile-threads 2"), std::string("--compile-threads 2").size(), "--compile-threads -1");
  const json alone = parse_json(test::run_kforge(args + dir.file("c.db")));
  CHECK(alone["cache_hits"] >= 1);
}

TEST_CASE("on PoCL a stored candidate whose compile may have crashed is not built again", "[cli]") {
  test::TempDir dir;
  const auto order = run_planted_plain(dir.file("plain.db")).order;
  // Tuned alone first, its compile brings the worker down: stored as a crash.
  const std::string faulty = order[3]["config"];
  const std::string db = dir.file("crashed.db");
  auto alone = run_aborting_on(faulty, "tune --template " + kPlanted + " --shape M=20,N=12,K=5 --config " + faulty +
                                           " --no-cache" + kFast + "--json --db " + db);
  REQUIRE(alone["evaluated_now"] == 1);
  REQUIRE(results_in(db)[0]["status"] == "crash");
  // The whole space, that compiler fault still planted: the stored crash
  // stays out of its group's program, which builds, so no code generator
  // or compile ahead is lost to it.
  auto rest = run_aborting_on(faulty, planted_batch_args() + db);
  CHECK(rest["evaluated_now"] == 7);
  CHECK(rest["generators_lost"] == 0);
  CHECK(rest["compile_ahead_stopped"].is_null());
  CHECK(rest["compiled_combined"] == 7);
}

TEST_CASE("on PoCL a guess that brings its code generator down ends guessing, and only it crashes", "[cli]") {
  test::TempDir dir;
  auto order = parse_json(test::run_kforge(kModelSix + "off --db " + dir.file("plain.db")));
  REQUIRE(order["evaluated"] == 6);
  auto plain = results_in(dir.file("plain.db"));
  REQUIRE(plain.size() == 6);
  // The model's second design point is the first batch's guess, built by
  // the second code generator, which aborts on it.
  const std::string faulty = plain[1]["config"];
  auto t = run_aborting_on(faulty, kModelSix + "off --db " + dir.file("faulty.db"));
  CHECK(t["evaluated"] == 6);
  CHECK(t["generators_lost"].get<int>() >= 1);
  // That guess was the last: the next batches hold their candidate alone,
  // where the design's next points would otherwise have been guessed too.
  CHECK(t["guessed_ahead"] == 1);
  auto results = results_in(dir.file("faulty.db"));
  REQUIRE(results.size() == 6);
  check_only_crash(results, faulty);
}

TEST_CASE("bad input: exit 2, one line naming the problem, nothing stored lost", "[cli]") {
  test::TempDir dir;
  const std::string db = dir.file("keep.db");
  parse_json(test::run_kforge("tune --shape M=16,N=16,K=16 --max-evals 2 --db " + db + kFast + "--json"));
  // Flush the WAL into the main file so its bytes are a complete snapshot.
  REQUIRE(test::run_kforge("show --db " + db).exit_code == 0);
  auto snapshot = [&] {
    std::string all;
    for (const char* suffix : {"", "-wal"}) {
      if (std::filesystem::exists(db + suffix)) all += test::read_file(db + suffix);
    }
    return all;
  };
  const std::string before = snapshot();
  const auto rows_before = parse_json(test::run_kforge("show --results --json --db " + db))["results"].size();

  SECTION("corrupted manifest") {
    const auto tdir = dir.path() / "broken";
    std::filesystem::copy(kPlanted, tdir);
    test::write_file((tdir / "manifest.json").string(), "{\"schema_version\": 1, \"name\": ");
    auto r = test::run_kforge("tune --template " + tdir.string() + " --db " + db + kFast);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("manifest.json"));
  }
  SECTION("a problem too large for the memory there is") {
    auto r = test::run_kforge("tune --shape M=200000,N=200000,K=200000 --db " + db + kFast);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("K=200000,M=200000,N=200000") && Catch::Contains("GiB") &&
                          Catch::Contains("memory"));
  }
  SECTION("manifest with an unknown name in a constraint") {
    const auto tdir = dir.path() / "unknown";
    std::filesystem::copy(kPlanted, tdir);
    auto m = test::read_file((tdir / "manifest.json").string());
    m.replace(m.find("BX * BY <= max_block_threads"), 28, "BX * BZ <= max_block_threads");
    test::write_file((tdir / "manifest.json").string(), m);
    auto r = test::run_kforge("tune --template " + tdir.string() + " --db " + db + kFast);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("manifest.json") && Catch::Contains("constraints[0]") &&
                          Catch::Contains("BZ") && Catch::Contains("position 5"));
  }
  SECTION("bad shape, dtype, layout and device") {
    for (const char* args : {"--shape M=0,N=1,K=1", "--shape M=a", "--dtype f64", "--layout NX", "--device cuda:7",
                             "--op conv9"}) {
      auto r = test::run_kforge(std::string("tune ") + args + " --db " + db + kFast);
      INFO(args << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
    }
  }
  CHECK(snapshot() == before);
  CHECK(parse_json(test::run_kforge("show --results --json --db " + db))["results"].size() == rows_before);
}

TEST_CASE("a corrupt or foreign database file: exit 2, named, untouched", "[cli]") {
  test::TempDir dir;
  const std::string db = dir.file("bad.db");
  const std::string content = GENERATE(std::string("this is not a database\n"),
                                       std::string("SQLite format 3") + std::string(200, '\x07'));
  test::write_file(db, content);
  for (const char* cmd : {"tune --quiet --shape M=8,N=8,K=8 --max-evals 1", "show", "lookup --shape M=8,N=8,K=8"}) {
    auto r = test::run_kforge(std::string(cmd) + " --db " + db);
    INFO(cmd << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("bad.db"));
  }
  CHECK(test::read_file(db) == content);
}

TEST_CASE("a tune run's finalists say which won and which its re-timing cannot tell from it", "[cli]") {
  test::TempDir dir;
  const json t = parse_json(test::run_kforge("tune --op gemm --shape M=32,N=32,K=32 --max-evals 4 --quiet --json --db " +
                                             dir.file("f.db")));
  REQUIRE(t["winner"].is_object());
  REQUIRE(t["finalists"].size() >= 2);
  const json* won = nullptr;
  for (const auto& f : t["finalists"]) {
    const double low = f["interleaved_ci_ms"][0], high = f["interleaved_ci_ms"][1];
    const double median = f["interleaved_median_ms"];
    CHECK(low <= median);
    CHECK(median <= high);
    CHECK(f["interleaved_ci_coverage"].get<double>() > 0);
    if (f["winner"].get<bool>()) {
      CHECK(won == nullptr);
      won = &f;
      CHECK(f["config"] == t["winner"]["config"]);
      CHECK_FALSE(f["within_noise_of_winner"].get<bool>());
    }
  }
  REQUIRE(won != nullptr);
  // Within noise exactly when the two intervals overlap and the race did
  // not drop it (slower than the leader in every round: told apart).
  for (const auto& f : t["finalists"]) {
    if (&f == won) continue;
    const bool overlap = f["interleaved_ci_ms"][0].get<double>() <= (*won)["interleaved_ci_ms"][1].get<double>() &&
                         (*won)["interleaved_ci_ms"][0].get<double>() <= f["interleaved_ci_ms"][1].get<double>();
    CHECK(f["within_noise_of_winner"].get<bool>() == (overlap && f["interleaved_stop"] != "raced"));
  }
}
