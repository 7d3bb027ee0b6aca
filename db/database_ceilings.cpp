// Database::put_measured_ceiling and Database::measured_ceilings: the peaks
// kforge measured on each device (schema version 5, device_ceilings).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

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
  // One JSON object a row keeps the reading to sql::column's one text column.
  KF_TRY_ASSIGN(rows, sql::column(db_, path_,
                                  "SELECT json_object('device_key', d.key, 'name', c.name, 'value', c.value, "
                                  "'unit', c.unit, 'method', c.method, 'tool_version', c.tool_version, "
                                  "'created_at', c.created_at) FROM device_ceilings c JOIN devices d ON "
                                  "d.id = c.device_id ORDER BY d.key, c.name"));
  std::vector<MeasuredCeilingRecord> out;
  for (const std::string& row : rows) {
    const auto j = nlohmann::json::parse(row);
    out.push_back({j["device_key"], j["name"], j["value"], j["unit"], j["method"], j["tool_version"],
                   j["created_at"]});
  }
  return out;
}

}  // namespace kforge
