// Database::put_measured_ceiling and Database::measured_ceilings: the peaks
// kforge measured on each device (schema version 5, device_ceilings).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string_view>

#include "db/database.hpp"
#include "db/sql_steps.hpp"

namespace kforge {
namespace {

constexpr const char* kNames[] = {"copy_bandwidth", "fp32_fma"};

std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

Status Database::put_measured_ceiling(const MeasuredCeilingRecord& r) {
  if (std::find(std::begin(kNames), std::end(kNames), r.name) == std::end(kNames))
    return Error::bad_input(path_ + ": measured ceiling name '" + r.name + "' is not copy_bandwidth or fp32_fma");
  if (!std::isfinite(r.value) || r.value <= 0)
    return Error::bad_input(path_ + ": measured ceiling " + r.name + " value " + exact(r.value) +
                            " is not a positive number");
  KF_TRY_ASSIGN(ids, sql::column(db_, path_, "SELECT id FROM devices WHERE key = ?1", {r.device_key}));
  if (ids.empty()) return Error::not_found(path_ + ": no device '" + r.device_key + "' to store a ceiling for");
  const std::string at = r.created_at.empty() ? utc_now() : r.created_at;
  KF_TRY(sql::run(db_, path_,
                  "INSERT INTO device_ceilings (device_id, name, value, unit, method, tool_version, created_at) "
                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (device_id, name) DO UPDATE SET "
                  "value = excluded.value, unit = excluded.unit, method = excluded.method, "
                  "tool_version = excluded.tool_version, created_at = excluded.created_at",
                  {ids.front(), r.name, exact(r.value), r.unit, r.method, r.tool_version, at}));
  return ok_status();
}

Result<std::vector<MeasuredCeilingRecord>> Database::measured_ceilings() {
  // Columns are read as stored: a row built as JSON text by SQLite does not
  // parse where a column holds bytes that are not UTF-8 (nlohmann throws).
  constexpr std::string_view kQuery =
      "SELECT d.key, c.name, c.value, c.unit, c.method, c.tool_version, c.created_at FROM device_ceilings c "
      "JOIN devices d ON d.id = c.device_id ORDER BY d.key, c.name";
  sqlite3_stmt* raw = nullptr;
  const int prepared = sqlite3_prepare_v2(db_, kQuery.data(), static_cast<int>(kQuery.size()), &raw, nullptr);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> st(raw, sqlite3_finalize);
  if (prepared != SQLITE_OK) return Error{ErrorCode::kDatabase, path_ + ": " + sqlite3_errmsg(db_), {}};
  auto text = [raw](int col) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(raw, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(raw, col))) : std::string();
  };
  std::vector<MeasuredCeilingRecord> out;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    MeasuredCeilingRecord& r = out.emplace_back();
    r.device_key = text(0);
    r.name = text(1);
    // A value that is not a number (a damaged file) is refused as put_measured_ceiling refuses it.
    const int type = sqlite3_column_type(raw, 2);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER)
      return Error::bad_input(path_ + ": measured ceiling " + r.name + " of device " + r.device_key +
                              " holds no number: '" + text(2) + "'");
    r.value = sqlite3_column_double(raw, 2);
    r.unit = text(3);
    r.method = text(4);
    r.tool_version = text(5);
    r.created_at = text(6);
  }
  if (rc != SQLITE_DONE) return Error{ErrorCode::kDatabase, path_ + ": " + sqlite3_errmsg(db_), {}};
  return out;
}

}  // namespace kforge
