// Database::merge_from: adds another tuning database to this one in a single
// transaction, matching rows by natural keys (device key, template name +
// hash, problem key, sweep content, result key), then recomputes winners.
//
// The column lists below are the schema's: a migration that adds a column to
// a merged table must add it here too (tests/db/database_merge_test.cpp
// compares every field of merged rows with the source).
#include <sqlite3.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "db/database.hpp"
#include "db/sql_steps.hpp"

namespace kforge {
namespace {

constexpr const char* kDevices = R"sql(
INSERT INTO main.devices (key, backend, vendor, name, arch, info_json, created_at)
SELECT key, backend, vendor, name, arch, info_json, created_at FROM kf_src.devices WHERE true
ORDER BY id ON CONFLICT (key) DO NOTHING)sql";

constexpr const char* kTemplates = R"sql(
INSERT INTO main.templates (name, op, hash, manifest_json, created_at)
SELECT name, op, hash, manifest_json, created_at FROM kf_src.templates WHERE true
ORDER BY id ON CONFLICT (name, hash) DO NOTHING)sql";

constexpr const char* kProblems = R"sql(
INSERT INTO main.problems (key, op, dims_json, dtype, layout)
SELECT key, op, dims_json, dtype, layout FROM kf_src.problems WHERE true
ORDER BY id ON CONFLICT (key) DO NOTHING)sql";

// A sweep has no natural key: two sweeps are the same when every column but
// the id agrees (finished_at may be NULL, hence IS).
#define KF_SAME_SWEEP(m, s)                                                            \
  m ".tool_version = " s ".tool_version AND " m ".git_revision = " s                   \
    ".git_revision AND " m ".command_line = " s ".command_line AND " m                 \
    ".settings_json = " s ".settings_json AND " m ".device_json = " s                  \
    ".device_json AND " m ".host = " s ".host AND " m ".started_at = " s ".started_at " \
    "AND " m ".finished_at IS " s ".finished_at"

constexpr const char* kSweeps =
    "INSERT INTO main.sweeps (tool_version, git_revision, command_line, settings_json, "
    "device_json, host, started_at, finished_at) SELECT s.tool_version, s.git_revision, "
    "s.command_line, s.settings_json, s.device_json, s.host, s.started_at, s.finished_at "
    "FROM kf_src.sweeps s WHERE NOT EXISTS (SELECT 1 FROM main.sweeps m WHERE " KF_SAME_SWEEP(
        "m", "s") ") ORDER BY s.id";

constexpr const char* kSweepMap =
    "INSERT INTO temp.kf_sweep_map (src_id, dst_id) SELECT s.id, (SELECT min(m.id) FROM "
    "main.sweeps m WHERE " KF_SAME_SWEEP("m", "s") ") FROM kf_src.sweeps s";
#undef KF_SAME_SWEEP

constexpr const char* kResults = R"sql(
INSERT INTO main.results (sweep_id, device_id, template_id, problem_id, config, status, reason,
  median_ms, p20_ms, p80_ms, min_ms, max_ms, count, samples_json, error_norm, error_ratio,
  compile_ms, resources_json, compile_log, created_at)
SELECT sm.dst_id, md.id, mt.id, mp.id, r.config, r.status, r.reason, r.median_ms, r.p20_ms,
  r.p80_ms, r.min_ms, r.max_ms, r.count, r.samples_json, r.error_norm, r.error_ratio,
  r.compile_ms, r.resources_json, r.compile_log, r.created_at
FROM kf_src.results r
  JOIN kf_src.devices sd ON sd.id = r.device_id JOIN main.devices md ON md.key = sd.key
  JOIN kf_src.templates st ON st.id = r.template_id
  JOIN main.templates mt ON mt.name = st.name AND mt.hash = st.hash
  JOIN kf_src.problems sp ON sp.id = r.problem_id JOIN main.problems mp ON mp.key = sp.key
  LEFT JOIN temp.kf_sweep_map sm ON sm.src_id = r.sweep_id
WHERE true ORDER BY r.id
ON CONFLICT (device_id, template_id, problem_id, config) DO NOTHING)sql";

// Counters travel with their result, matched by its natural key; where a
// collector already stored rows for that result here, they are kept whole
// (as a stored result is), so two collections never mix.
constexpr const char* kCounters = R"sql(
INSERT INTO main.counters (result_id, source, collector, name, value, unit, note, tool, counters_version,
  created_at)
SELECT mr.id, c.source, c.collector, c.name, c.value, c.unit, c.note, c.tool, c.counters_version, c.created_at
FROM kf_src.counters c JOIN kf_src.results r ON r.id = c.result_id
  JOIN kf_src.devices sd ON sd.id = r.device_id JOIN main.devices md ON md.key = sd.key
  JOIN kf_src.templates st ON st.id = r.template_id
  JOIN main.templates mt ON mt.name = st.name AND mt.hash = st.hash
  JOIN kf_src.problems sp ON sp.id = r.problem_id JOIN main.problems mp ON mp.key = sp.key
  JOIN main.results mr ON mr.device_id = md.id AND mr.template_id = mt.id AND mr.problem_id = mp.id
    AND mr.config = r.config
WHERE NOT EXISTS (SELECT 1 FROM main.counters m WHERE m.result_id = mr.id AND m.collector = c.collector)
ORDER BY c.id
ON CONFLICT (result_id, collector, name) DO NOTHING)sql";

// The winner rule of add_result (fastest ok result whose configuration its
// template declares, ties: the earliest), for every triple at once;
// updated_at moves only where the winner changes.
constexpr const char* kWinners = R"sql(
INSERT INTO main.winners (device_id, problem_id, template_id, result_id, config, median_ms,
  updated_at)
SELECT device_id, problem_id, template_id, id, config, median_ms, ?1 FROM (
  SELECT r.id, r.device_id, r.problem_id, r.template_id, r.config, r.median_ms, row_number() OVER (
    PARTITION BY r.device_id, r.problem_id, r.template_id ORDER BY r.median_ms, r.id) AS rank
  FROM main.results r JOIN main.templates t ON t.id = r.template_id
  WHERE r.status = 'ok' AND r.median_ms IS NOT NULL AND kforge_declared(t.manifest_json, r.config))
WHERE rank = 1
ON CONFLICT (device_id, problem_id, template_id) DO UPDATE SET result_id = excluded.result_id,
  config = excluded.config, median_ms = excluded.median_ms, updated_at = excluded.updated_at
WHERE result_id <> excluded.result_id)sql";

// A winner whose configuration its template does not declare, where no
// declared result replaced it: it goes, as in refresh_winner.
constexpr const char* kUndeclaredWinners = R"sql(
DELETE FROM main.winners WHERE NOT EXISTS (
  SELECT 1 FROM main.results r JOIN main.templates t ON t.id = r.template_id
  WHERE r.id = winners.result_id AND kforge_declared(t.manifest_json, r.config)))sql";

/// Attaches the source for the scope; rolls back an open transaction, drops
/// the sweep map and detaches on the way out, whatever happened.
class Attached {
 public:
  Attached(sqlite3* db, const std::string& path) : db_(db), path_(path) {}
  Attached(const Attached&) = delete;
  Attached& operator=(const Attached&) = delete;
  ~Attached() {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "DROP TABLE IF EXISTS temp.kf_sweep_map", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "DETACH DATABASE kf_src", nullptr, nullptr, nullptr);
  }
  Status attach(const std::string& other) {
    KF_TRY(sql::run(db_, path_, "ATTACH DATABASE ?1 AS kf_src", {other}));
    return ok_status();
  }

 private:
  sqlite3* db_;
  const std::string& path_;
};

}  // namespace

Result<Database::MergeReport> Database::merge_from(const std::string& other_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::equivalent(path_, other_path, ec)) {
    return Error::bad_input(other_path + ": cannot merge a database into itself");
  }
  {
    // Version, header and existence checks with their usual one-line errors.
    KF_TRY_ASSIGN(probe, Database::open(other_path, Mode::kReadOnly));
  }
  Attached src(db_, path_);
  KF_TRY(src.attach(other_path));
  KF_TRY_ASSIGN(check, sql::column(db_, path_, "PRAGMA kf_src.quick_check"));
  if (check.empty() || check.front() != "ok") {
    std::string first = check.empty() ? std::string("quick_check failed") : check.front();
    for (char& c : first) {
      if (c == '\n') c = ' ';
    }
    return Error::bad_input(other_path + ": database is corrupt: " + first);
  }

  MergeReport report;
  KF_TRY(sql::run(db_, path_, "BEGIN IMMEDIATE"));
  KF_TRY(sql::run(db_, path_,
                  "CREATE TEMP TABLE kf_sweep_map (src_id INTEGER PRIMARY KEY, dst_id INTEGER)"));
  KF_TRY_ASSIGN(devices, sql::run(db_, path_, kDevices));
  KF_TRY_ASSIGN(templates, sql::run(db_, path_, kTemplates));
  KF_TRY_ASSIGN(problems, sql::run(db_, path_, kProblems));
  KF_TRY_ASSIGN(sweeps, sql::run(db_, path_, kSweeps));
  KF_TRY(sql::run(db_, path_, kSweepMap));
  KF_TRY_ASSIGN(offered, sql::count(db_, path_, "SELECT count(*) FROM kf_src.results"));
  KF_TRY_ASSIGN(results, sql::run(db_, path_, kResults));
  KF_TRY_ASSIGN(counters, sql::run(db_, path_, kCounters));
  KF_TRY_ASSIGN(winners, sql::run(db_, path_, kWinners, {utc_now()}));
  KF_TRY_ASSIGN(undeclared, sql::run(db_, path_, kUndeclaredWinners));
  KF_TRY(sql::run(db_, path_, "COMMIT"));
  report.devices = devices;
  report.templates = templates;
  report.problems = problems;
  report.sweeps = sweeps;
  report.results = results;
  report.counters = counters;
  report.duplicate_results = offered - results;
  report.winners_changed = winners + undeclared;
  return report;
}

}  // namespace kforge
