// Database::replace_counters, counters and result_id: hardware counters beside
// the result rows (schema version 4). A collector's rows for a result are
// replaced whole; the result row is never written here.
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <string_view>

#include "db/database.hpp"
#include "db/sql_steps.hpp"

namespace kforge {
namespace {

constexpr std::array<std::string_view, 6> kSources = {"ncu",         "cupti", "perf",
                                                      "rocprofiler", "model", "unavailable"};

struct Finalizer {
  void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
};
using StatementHandle = std::unique_ptr<sqlite3_stmt, Finalizer>;

Error db_error(sqlite3* db, const std::string& path) {
  return {ErrorCode::kDatabase, path + ": " + sqlite3_errmsg(db), {}};
}

Result<StatementHandle> prepare(sqlite3* db, const std::string& path, std::string_view sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &st, nullptr) != SQLITE_OK) {
    sqlite3_finalize(st);
    return db_error(db, path);
  }
  return StatementHandle(st);
}

void bind_text(sqlite3_stmt* st, int i, std::string_view v) {
  sqlite3_bind_text(st, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

std::string text(sqlite3_stmt* st, int col) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st, col))) : std::string();
}

/// kBadInput naming the row, the field and its value when `r` cannot be stored.
Status check_row(const std::string& path, std::int64_t result_id, const std::string& collector,
                 const CounterRecord& r, std::size_t index) {
  const std::string where = path + ": counters of result " + std::to_string(result_id) + ", row " +
                            std::to_string(index) + " (" + (r.name.empty() ? "no name" : r.name) + "): ";
  if (r.collector != collector) {
    return Error::bad_input(where + "collector '" + r.collector + "' is not '" + collector + "'");
  }
  if (!is_counter_source(r.source))
    return Error::bad_input(where + "source '" + r.source +
                            "' is not one of ncu, cupti, perf, rocprofiler, model, unavailable");
  if (r.name.empty()) return Error::bad_input(where + "name is empty");
  if (r.source == "unavailable") {
    if (r.note.empty()) return Error::bad_input(where + "an unavailable row needs a note saying why");
    return ok_status();
  }
  if (!r.value) return Error::bad_input(where + "value is missing");
  if (!std::isfinite(*r.value))
    return Error::bad_input(where + "value " + std::to_string(*r.value) + " is not finite");
  return ok_status();
}

/// Ends an open transaction on the way out unless it was committed.
struct Rollback {
  sqlite3* db;
  ~Rollback() {
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  }
};

}  // namespace

bool is_counter_source(std::string_view source) {
  return std::find(kSources.begin(), kSources.end(), source) != kSources.end();
}

Status Database::replace_counters(std::int64_t result_id, const std::string& collector,
                                  const std::vector<CounterRecord>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i) KF_TRY(check_row(path_, result_id, collector, rows[i], i));
  Rollback guard{db_};
  KF_TRY(sql::run(db_, path_, "BEGIN IMMEDIATE"));
  KF_TRY_ASSIGN(
      found, sql::count(db_, path_, "SELECT count(*) FROM results WHERE id = " + std::to_string(result_id)));
  if (found == 0)
    return Error::not_found(path_ + ": no result " + std::to_string(result_id) + " to store counters for");
  KF_TRY(sql::run(db_, path_, "DELETE FROM counters WHERE result_id = ?1 AND collector = ?2",
                  {std::to_string(result_id), collector}));
  KF_TRY_ASSIGN(ins,
                prepare(db_, path_,
                        "INSERT INTO counters (result_id, source, collector, name, value, unit, note, tool, "
                        "counters_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  const std::string now = utc_now();
  for (const CounterRecord& r : rows) {
    sqlite3_stmt* st = ins.get();
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, result_id);
    bind_text(st, 2, r.source);
    bind_text(st, 3, r.collector);
    bind_text(st, 4, r.name);
    if (r.value)
      sqlite3_bind_double(st, 5, *r.value);
    else
      sqlite3_bind_null(st, 5);
    bind_text(st, 6, r.unit);
    bind_text(st, 7, r.note);
    bind_text(st, 8, r.tool);
    sqlite3_bind_int(st, 9, r.counters_version);
    bind_text(st, 10, r.created_at.empty() ? now : r.created_at);
    if (sqlite3_step(st) != SQLITE_DONE) return db_error(db_, path_);
  }
  KF_TRY(sql::run(db_, path_, "COMMIT"));
  return ok_status();
}

Result<std::vector<CounterRecord>> Database::counters(const std::vector<std::int64_t>& result_ids) {
  // Ids are integers, so the list is written into the SQL text, never a value from outside.
  std::string sql =
      "SELECT id, result_id, source, collector, name, value, unit, note, tool, counters_version, created_at "
      "FROM counters";
  if (!result_ids.empty()) {
    sql += " WHERE result_id IN (";
    for (std::size_t i = 0; i < result_ids.size(); ++i) sql += (i ? "," : "") + std::to_string(result_ids[i]);
    sql += ")";
  }
  sql += " ORDER BY result_id, collector, id";
  KF_TRY_ASSIGN(st, prepare(db_, path_, sql));
  std::vector<CounterRecord> out;
  int rc;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    CounterRecord& r = out.emplace_back();
    r.id = sqlite3_column_int64(st.get(), 0);
    r.result_id = sqlite3_column_int64(st.get(), 1);
    r.source = text(st.get(), 2);
    r.collector = text(st.get(), 3);
    r.name = text(st.get(), 4);
    if (sqlite3_column_type(st.get(), 5) != SQLITE_NULL) r.value = sqlite3_column_double(st.get(), 5);
    r.unit = text(st.get(), 6);
    r.note = text(st.get(), 7);
    r.tool = text(st.get(), 8);
    r.counters_version = sqlite3_column_int(st.get(), 9);
    r.created_at = text(st.get(), 10);
  }
  if (rc != SQLITE_DONE) return db_error(db_, path_);
  return out;
}

Result<std::optional<std::int64_t>> Database::result_id(std::int64_t device_id, std::int64_t template_id,
                                                        std::int64_t problem_id, const std::string& config) {
  KF_TRY_ASSIGN(st, prepare(db_, path_,
                            "SELECT id FROM results WHERE device_id = ? AND template_id = ? AND problem_id = ? "
                            "AND config = ?"));
  sqlite3_bind_int64(st.get(), 1, device_id);
  sqlite3_bind_int64(st.get(), 2, template_id);
  sqlite3_bind_int64(st.get(), 3, problem_id);
  bind_text(st.get(), 4, config);
  const int rc = sqlite3_step(st.get());
  if (rc == SQLITE_ROW) return std::optional<std::int64_t>(sqlite3_column_int64(st.get(), 0));
  if (rc != SQLITE_DONE) return db_error(db_, path_);
  return std::optional<std::int64_t>();
}

}  // namespace kforge
