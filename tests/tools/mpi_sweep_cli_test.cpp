// `mpirun -n 3 kforge sweep PLAN --mpi` end to end on PoCL, three ranks
// sharing the CPU device: the plan is covered once and the merged database
// holds what a serial sweep stores; a rank killed with SIGKILL mid-task
// loses only what was in flight and the rerun completes the plan, or, where
// mpirun lets the others live, its task goes to another rank in the same
// run; with --profile the counters reach the merged database; a kforge built
// without MPI refuses --mpi with exit status 2.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using namespace kforge;

namespace {

/// Five small problems, two candidates each, timed twice (no GEMM: its compiles are the slow ones on PoCL).
const char* kPlan = R"({
  "schema_version": 1,
  "budget": {"strategy": "random", "max_evals": 2, "seed": 5, "min_reps": 2, "max_reps": 2},
  "entries": [
    {"op": "softmax", "shapes": ["rows=3,cols=40", "rows=2,cols=64"]},
    {"op": "layernorm", "shapes": ["rows=2,cols=24"]},
    {"op": "transpose", "shapes": ["rows=16,cols=24"]},
    {"op": "reduce", "shapes": ["rows=4,cols=32"]}
  ]})";
constexpr std::size_t kTasks = 5;
constexpr std::size_t kRows = 2 * kTasks;  // every space holds more than two candidates

using Row =
    std::tuple<std::string, std::string, std::string, std::string>;  // problem, template, hash, config

/// Every stored result (a multiset, so that a duplicate shows); empty when the file is missing.
std::multiset<Row> rows_of(const std::string& path) {
  std::multiset<Row> out;
  if (!std::filesystem::exists(path)) return out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);
    sqlite3_stmt* st = nullptr;
    const char* sql =
        "SELECT p.key, t.name, t.hash, r.config FROM results r JOIN problems p ON p.id = r.problem_id "
        "JOIN templates t ON t.id = r.template_id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK) {
      auto text = [&](int i) {
        return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, i)));
      };
      while (sqlite3_step(st) == SQLITE_ROW) out.insert({text(0), text(1), text(2), text(3)});
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

std::set<std::string> problems_of(const std::multiset<Row>& rows) {
  std::set<std::string> out;
  for (const auto& r : rows) out.insert(std::get<0>(r));
  return out;
}

/// Results in the plan's database and every rank database beside it.
std::multiset<Row> all_rows(const std::string& db) {
  std::multiset<Row> out = rows_of(db);
  std::error_code ec;
  if (!std::filesystem::is_directory(db + ".ranks", ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(db + ".ranks")) {
    if (e.path().extension() != ".db") continue;
    for (const auto& r : rows_of(e.path().string())) out.insert(r);
  }
  return out;
}

/// mpirun as a test may run it: as root in CI, more ranks than cores.
void allow_mpirun() {
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

std::string mpirun(int ranks) {
  return std::string(KFORGE_MPIRUN) + " --oversubscribe -n " + std::to_string(ranks) + " " + KFORGE_CLI;
}

/// Runs a shell command line; stdout captured, stderr into `err`.
test::CommandResult run_shell(const std::string& cmd) {
  test::TempDir tmp;
  const std::string err_file = tmp.file("stderr");
  test::CommandResult r;
  FILE* p = popen((cmd + " 2>" + err_file).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = test::read_file(err_file);
  return r;
}

long count(const std::string& db, const std::string& sql) {
  long n = -1;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

}  // namespace

#ifdef KFORGE_MPIRUN

TEST_CASE("mpi sweep: three ranks cover the plan once and the merged database holds a serial sweep's results",
          "[cli][opencl][mpi]") {
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), cache = " --cache-dir " + dir.file("cache");
  test::write_file(plan, kPlan);
  const std::string serial = dir.file("serial.db"), db = dir.file("mpi.db");
  auto s = test::run_kforge("sweep " + plan + cache + " --quiet --db " + serial);
  INFO(s.err);
  REQUIRE(s.exit_code == 0);
  const auto expected = rows_of(serial);
  REQUIRE(problems_of(expected).size() == kTasks);
  REQUIRE(expected.size() == kRows);

  auto r = run_shell(mpirun(3) + " sweep " + plan + cache + " --mpi --json --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["tasks"].size() == kTasks);
  std::set<std::size_t> indices;
  for (const auto& t : j["tasks"]) {
    CHECK(t["state"] == "ran");
    CHECK(t["sweep_id"].get<long>() > 0);  // the sweep's id in the merged database
    indices.insert(t["index"].get<std::size_t>());
  }
  CHECK(indices.size() == kTasks);
  REQUIRE(j["mpi"]["ranks"].size() == 3);
  int handed_out = 0;
  for (const auto& rank : j["mpi"]["ranks"]) {
    CHECK(rank["selector"] == "opencl:0");  // three ranks share the one CPU device
    handed_out += rank["tasks"].get<int>();
  }
  CHECK(handed_out == static_cast<int>(kTasks));
  CHECK(rows_of(db) == expected);  // same task set, same results, none twice
  CHECK(count(db, "SELECT count(*) FROM sweeps WHERE finished_at <> ''") == static_cast<long>(kTasks));
  CHECK_FALSE(std::filesystem::exists(db + ".ranks"));  // merged and removed

  // A finished plan's rerun runs nothing.
  auto again = run_shell(mpirun(2) + " sweep " + plan + cache + " --mpi --json --db " + db);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  for (const auto& t : nlohmann::json::parse(again.out)["tasks"]) CHECK(t["state"] == "skipped");
  CHECK(rows_of(db) == expected);
}

TEST_CASE("mpi sweep: a rank killed mid-task leaves the others' results, and the rerun completes the plan",
          "[cli][opencl][mpi]") {
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), cache = " --cache-dir " + dir.file("cache");
  test::write_file(plan, kPlan);
  const std::string db = dir.file("part.db");

  // Rank 2 dies by SIGKILL once it has stored the first result of its first task (KFORGE_TEST_KILL_RANK).
  const auto killed =
      run_shell("KFORGE_TEST_KILL_RANK=2 " + mpirun(3) + " sweep " + plan + cache + " --mpi --db " + db);
  INFO(killed.err);
  CHECK(killed.exit_code != 0);  // Open MPI ends the job
  const std::string rank2 = db + ".ranks/rank-2.db";
  const auto before = all_rows(db);
  INFO("results stored when killed: " << before.size() << " of " << kRows);
  REQUIRE(rows_of(rank2).size() == 1);  // rank 2's own result survives its death
  REQUIRE(before.size() < kRows);

  auto r = run_shell(mpirun(3) + " sweep " + plan + cache + " --mpi --json --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["tasks"].size() == kTasks);
  long now = 0;
  for (const auto& t : j["tasks"]) {
    CHECK(t["state"] != "error");
    now += t["evaluated_now"].get<long>();
  }
  // A task resumes on the rank whose database holds its results: nothing stored is evaluated again.
  CHECK(now == static_cast<long>(kRows - before.size()));
  const auto after = rows_of(db);
  CHECK(std::set<Row>(after.begin(), after.end()).size() == kRows);  // none twice
  CHECK(after.size() == kRows);
  for (const auto& row : before) CHECK(after.count(row) == 1);  // none lost
  CHECK(problems_of(after).size() == kTasks);
  CHECK(count(db, "SELECT count(*) FROM sweeps WHERE finished_at <> ''") >= static_cast<long>(kTasks));
  CHECK_FALSE(std::filesystem::exists(db + ".ranks"));
}

TEST_CASE("mpi sweep: where mpirun survives a rank's death, its task goes to another and the run completes",
          "[cli][opencl][mpi]") {
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), cache = " --cache-dir " + dir.file("cache");
  test::write_file(plan, kPlan);
  const std::string db = dir.file("lost.db");
  // Open MPI 4 keeps the other ranks running when told to (docs/sweep.md, "Faults").
  const std::string survive = " --mca orte_enable_recovery 1 --mca orte_abort_on_non_zero_status 0";
  const std::string launch = std::string(KFORGE_MPIRUN) + survive + " --oversubscribe -n 3 " + KFORGE_CLI;
  auto r = run_shell("KFORGE_TEST_KILL_RANK=2 " + launch + " sweep " + plan + cache +
                     " --mpi --mpi-lost-after 3 --json --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["tasks"].size() == kTasks);
  for (const auto& t : j["tasks"]) {
    CHECK(t["state"] == "ran");
    CHECK(t["rank"] != 2);  // rank 2 reported nothing: every task was finished by the others
  }
  REQUIRE(j["mpi"]["ranks"].size() == 3);
  CHECK(j["mpi"]["ranks"][2]["lost"] == true);
  CHECK(j["mpi"]["ranks"][0]["lost"] == false);
  // Rank 2's one stored result was merged too; the rank that took its task
  // evaluated that configuration again, and the merge kept one of the two.
  const auto after = rows_of(db);
  CHECK(after.size() == kRows);
  CHECK(std::set<Row>(after.begin(), after.end()).size() == kRows);
  CHECK(problems_of(after).size() == kTasks);
  CHECK_FALSE(std::filesystem::exists(db + ".ranks"));
}

TEST_CASE("mpi sweep: --profile is accepted and every winner's counters reach the merged database",
          "[cli][opencl][mpi]") {
  // On a host without a CPU PMU a profiled run stores the same rows as a
  // plain one (perf says why it read nothing), so this shows the flag is
  // taken and the counters merge, not that a collector read a counter.
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), cache = " --cache-dir " + dir.file("cache");
  test::write_file(plan, kPlan);
  const std::string db = dir.file("profiled.db");
  auto r = run_shell(mpirun(2) + " sweep " + plan + cache + " --mpi --profile --json --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Each task's winner has its model rows and the perf collector's row,
  // whichever rank ran it.
  CHECK(count(db, "SELECT count(DISTINCT w.problem_id) FROM winners w JOIN counters c ON c.result_id = "
                  "w.result_id WHERE c.collector = 'perf'") == static_cast<long>(kTasks));
  CHECK(count(db, "SELECT count(DISTINCT w.problem_id) FROM winners w JOIN counters c ON c.result_id = "
                  "w.result_id WHERE c.source = 'model'") == static_cast<long>(kTasks));
}

TEST_CASE("mpi sweep: a second job on a database another job is sweeping is refused, naming the holder",
          "[cli][opencl][mpi]") {
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json"), db = dir.file("mpi.db");
  test::write_file(plan, kPlan);
  // The first job, stood for by a process holding the lock as rank 0 does.
  const int held = ::open((db + ".ranks.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX | LOCK_NB) == 0);
  const std::string note = "pid 4242 on node7 since 2026-12-05T16:02:11Z\n";
  REQUIRE(::write(held, note.data(), note.size()) == static_cast<ssize_t>(note.size()));
  auto refused = run_shell(mpirun(2) + " sweep " + plan + " --quiet --mpi --db " + db + " --cache-dir " +
                           dir.file("cache"));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find(db + ": another distributed sweep is using it (pid 4242 on node7 since "
                               "2026-12-05T16:02:11Z, lock " + db + ".ranks.lock)") != std::string::npos);
  CHECK(count(db, "SELECT count(*) FROM results") <= 0);  // nothing stored, nothing merged
  ::close(held);  // the first job ends: the lock is free again
  auto after = run_shell(mpirun(2) + " sweep " + plan + " --quiet --mpi --db " + db + " --cache-dir " +
                         dir.file("cache"));
  INFO(after.err);
  CHECK(after.exit_code == 0);
  CHECK(count(db, "SELECT count(*) FROM results") == static_cast<long>(kRows));
}

TEST_CASE("mpi sweep: bad input on every rank is one error line and exit status 2", "[cli][mpi]") {
  allow_mpirun();
  test::TempDir dir;
  const std::string plan = dir.file("plan.json");
  test::write_file(plan, R"({"schema_version": 1, "entries": [{"op": "gemm", "shapes": ["M=8,N=8"]}]})");
  auto r = run_shell(mpirun(2) + " sweep " + plan + " --mpi --db " + dir.file("x.db"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("kforge: error: " + plan +
                   ": entries[0].shapes[0]: \"M=8,N=8\": gemm: dimension K is missing\n") !=
        std::string::npos);
  CHECK(r.err.find("dimension K") == r.err.rfind("dimension K"));  // printed by one rank only
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));
}

#else

TEST_CASE("mpi sweep: three ranks cover the plan once and the merged database holds a serial sweep's results",
          "[cli][opencl][mpi]") {
  WARN("SKIPPED: mpirun was not found when kforge was configured (Debian: openmpi-bin)");
}

#endif

TEST_CASE("mpi sweep: a kforge built without MPI says --mpi is unavailable and exits 2", "[cli]") {
  test::TempDir dir;
  const std::string plan = dir.file("plan.json");
  test::write_file(plan, kPlan);
  auto r =
      run_shell(std::string(KFORGE_CLI_WITHOUT_MPI) + " sweep " + plan + " --mpi --db " + dir.file("x.db"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("kforge: error: --mpi: this kforge was built without MPI (KFORGE_WITH_MPI=OFF)") == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));
}
