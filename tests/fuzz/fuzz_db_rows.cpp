// Text columns of a tuning database as kforge reads them back. The first
// byte picks the reader; the rest is two column values split at the first
// NUL (a JSON column, then a name, key or configuration column):
//   0: kforge_declared(manifest_json, config), the winner rule's SQL function
//   1: kforge_device_key_v3(info_json, key), the version 3 migration's
//   2: one row of every table holding them, read back by every query of
//      Database, the tuning set and its JSON export
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "db/database.hpp"
#include "db/json_interchange.hpp"
#include "db/sql_functions.hpp"
#include "db/tuning_set.hpp"

namespace {

using kforge::Database;

/// The two SQL functions on a connection of their own (opened once: they keep no state per row).
void call_sql_functions(int selector, std::string_view a, std::string_view b) {
  static sqlite3* db = [] {
    sqlite3* raw = nullptr;
    sqlite3_open(":memory:", &raw);
    (void)kforge::sql::register_functions(raw, ":memory:");
    return raw;
  }();
  const char* query = selector == 0 ? "SELECT kforge_declared(?1, ?2)" : "SELECT kforge_device_key_v3(?1, ?2)";
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, query, -1, &st, nullptr) != SQLITE_OK) __builtin_trap();
  sqlite3_bind_text(st, 1, a.data(), static_cast<int>(a.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
  while (sqlite3_step(st) == SQLITE_ROW) {
  }
  sqlite3_finalize(st);
}

/// Writes a device, template, problem, sweep, result, counters and a ceiling
/// holding `json` and `name` in their text columns. Writes may refuse them.
void write_rows(Database& db, const std::string& json, const std::string& name) {
  const std::string key = name.empty() ? "k" : name;
  auto device = db.put_device({0, key, "cuda", "NVIDIA", name, name, json});
  auto tmpl = db.put_template({0, key, name, key, json});
  auto problem = db.put_problem({0, key, name, json, name, name});
  auto sweep = db.begin_sweep({0, name, name, name, json, json, name, name, ""});
  if (!device || !tmpl || !problem || !sweep) return;
  kforge::ResultRecord r;
  r.sweep_id = *sweep;
  r.device_id = *device;
  r.template_id = *tmpl;
  r.problem_id = *problem;
  r.config = name;
  r.status = "ok";
  r.reason = name;
  r.median_ms = 1.0;
  r.count = 1;
  r.samples_json = json;
  r.resources_json = json;
  r.compile_log = name;
  (void)db.add_result(r);
  r.median_ms = 0.5;
  (void)db.replace_timing(r);
  if (auto id = db.result_id(*device, *tmpl, *problem, name); id && *id) {
    kforge::CounterRecord c;
    c.source = c.collector = "ncu";
    c.name = name;
    c.value = 1.0;
    c.unit = c.note = c.tool = json;
    (void)db.replace_counters(**id, "ncu", {c});
  }
  (void)db.put_measured_ceiling({key, "fp32_fma", 1.0, name, json, name, name});
}

/// Every read path over the stored rows.
void read_rows(Database& db) {
  (void)db.devices();
  (void)db.templates();
  (void)db.problems();
  (void)db.sweeps();
  (void)db.results();
  (void)db.winners();
  (void)db.counters();
  (void)db.measured_ceilings();
  (void)db.verify();
  kforge::TuningFilter all;
  all.all_results = true;
  if (auto set = kforge::read_tuning_set(db, all)) (void)kforge::to_interchange_json(*set, "fuzz");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t nul = rest.find('\0');
  const std::string_view a = rest.substr(0, nul);
  const std::string_view b = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  const int selector = data[0] % 3;
  if (selector < 2) {
    call_sql_functions(selector, a, b);
    return 0;
  }
  // A fresh database each time: rows from earlier inputs would slow every query.
  auto db = Database::open(":memory:", Database::Mode::kReadWrite);
  if (!db) __builtin_trap();
  write_rows(**db, std::string(a), std::string(b));
  read_rows(**db);
  return 0;
}
