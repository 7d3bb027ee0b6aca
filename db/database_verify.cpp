// Database::verify: SQLite's full integrity check, foreign keys, and kforge's
// own invariant that every winner row is the fastest ok result of its
// (device, problem, template version) whose configuration the template
// declares, and that counter rows are well formed. Reads only.
#include <sqlite3.h>

#include "db/database.hpp"
#include "db/sql_steps.hpp"

namespace kforge {
namespace {

constexpr const char* kForeignKeys = R"sql(
SELECT "table" || ' row ' || coalesce(rowid, '?') || ' references a missing ' || parent || ' row'
FROM pragma_foreign_key_check)sql";

// The add_result winner rule, recomputed: the fastest ok result per triple
// whose configuration its template declares (ties: the earliest).
constexpr const char* kWinnerFindings = R"sql(
WITH best AS (
  SELECT id, device_id, problem_id, template_id FROM (
    SELECT r.id, r.device_id, r.problem_id, r.template_id, row_number() OVER (
      PARTITION BY r.device_id, r.problem_id, r.template_id ORDER BY r.median_ms, r.id) AS rank
    FROM results r JOIN templates t ON t.id = r.template_id
    WHERE r.status = 'ok' AND r.median_ms IS NOT NULL AND kforge_declared(t.manifest_json, r.config))
  WHERE rank = 1)
SELECT 'winner of device ' || w.device_id || ', problem ' || w.problem_id || ', template ' ||
       w.template_id || ' is result ' || w.result_id || ', but the fastest declared ok result is ' || b.id
FROM winners w JOIN best b USING (device_id, problem_id, template_id) WHERE b.id <> w.result_id
UNION ALL
SELECT 'no winner row for device ' || b.device_id || ', problem ' || b.problem_id ||
       ', template ' || b.template_id || ' (fastest ok result ' || b.id || ')'
FROM best b LEFT JOIN winners w USING (device_id, problem_id, template_id)
WHERE w.result_id IS NULL
UNION ALL
SELECT 'winner of device ' || w.device_id || ', problem ' || w.problem_id || ', template ' ||
       w.template_id || ' does not match result ' || w.result_id ||
       ' (config, median or status differ)'
FROM winners w JOIN results r ON r.id = w.result_id
WHERE r.config <> w.config OR r.median_ms IS NOT w.median_ms OR r.status <> 'ok'
   OR r.device_id <> w.device_id OR r.problem_id <> w.problem_id OR r.template_id <> w.template_id
UNION ALL
SELECT 'winner of device ' || w.device_id || ', problem ' || w.problem_id || ', template ' ||
       w.template_id || ' has configuration ' || w.config || ', which its template does not declare'
FROM winners w JOIN templates t ON t.id = w.template_id
WHERE NOT kforge_declared(t.manifest_json, w.config)
)sql";

// Counter rows as replace_counters writes them: a known source, a value
// unless unavailable, a note when unavailable, a version this kforge knows.
constexpr const char* kCounterFindings = R"sql(
SELECT 'row ' || id || ' of result ' || result_id || ' has source ' || quote(source) ||
       ', which is not a counter source'
FROM counters WHERE source NOT IN ('ncu', 'cupti', 'perf', 'rocprofiler', 'model', 'unavailable')
UNION ALL
SELECT 'row ' || id || ' of result ' || result_id || ' (' || name || ') has no value'
FROM counters WHERE source <> 'unavailable' AND value IS NULL
UNION ALL
SELECT 'row ' || id || ' of result ' || result_id || ' is unavailable without a note saying why'
FROM counters WHERE source = 'unavailable' AND note = ''
UNION ALL
SELECT 'row ' || id || ' of result ' || result_id || ' has counters version ' || counters_version ||
       ', newer than this kforge knows (' || ?1 || ')'
FROM counters WHERE counters_version > CAST(?1 AS INTEGER)
)sql";

}  // namespace

Result<Database::IntegrityReport> Database::verify() {
  IntegrityReport report;
  report.schema_version = schema_version();
  KF_TRY_ASSIGN(integrity, sql::column(db_, path_, "PRAGMA integrity_check"));
  for (auto& line : integrity) {
    if (line == "ok") continue;
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    report.findings.push_back("integrity: " + line);
  }
  // On a damaged file the later queries may fail: that is a finding too.
  auto note = [&](const char* what, Result<std::vector<std::string>> lines) {
    if (!lines.ok()) {
      report.findings.push_back(std::string(what) + ": cannot check: " + lines.error().message);
      return;
    }
    for (auto& line : *lines) report.findings.push_back(what + (": " + line));
  };
  note("foreign key", sql::column(db_, path_, kForeignKeys));
  note("winners", sql::column(db_, path_, kWinnerFindings));
  note("counters", sql::column(db_, path_, kCounterFindings, {std::to_string(kCountersVersion)}));

  struct Count {
    std::int64_t* field;
    const char* query;
  };
  const Count counts[] = {
      {&report.devices, "SELECT count(*) FROM devices"},
      {&report.templates, "SELECT count(*) FROM templates"},
      {&report.problems, "SELECT count(*) FROM problems"},
      {&report.sweeps, "SELECT count(*) FROM sweeps"},
      {&report.results, "SELECT count(*) FROM results"},
      {&report.winners, "SELECT count(*) FROM winners"},
      {&report.counters, "SELECT count(*) FROM counters"},
      {&report.unfinished_sweeps, "SELECT count(*) FROM sweeps WHERE finished_at IS NULL"},
  };
  for (const Count& c : counts) {
    auto n = sql::count(db_, path_, c.query);
    if (n.ok()) *c.field = *n;
    else report.findings.push_back(std::string("count: cannot check: ") + n.error().message);
  }
  return report;
}

}  // namespace kforge
