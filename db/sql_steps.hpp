// Small raw-SQLite steps shared by the database's lifecycle operations (merge,
// verify); internal to kforge_db. SQL text is constant; values are bound.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/utc_time.hpp"

namespace kforge::sql {

/// Runs one statement with text parameters bound in order and returns
/// sqlite3_changes (rows written), or the rows' first columns when `rows` is
/// given. Failures are kDatabase errors naming `path`.
inline Result<std::int64_t> run(sqlite3* db, const std::string& path, std::string_view statement,
                                std::initializer_list<std::string_view> params = {},
                                std::vector<std::string>* rows = nullptr) {
  sqlite3_stmt* st = nullptr;
  auto fail = [&] {
    Error e{ErrorCode::kDatabase, path + ": " + sqlite3_errmsg(db), std::string(statement)};
    sqlite3_finalize(st);
    return e;
  };
  if (sqlite3_prepare_v2(db, statement.data(), static_cast<int>(statement.size()), &st, nullptr) !=
      SQLITE_OK) {
    return fail();
  }
  int i = 1;
  for (std::string_view p : params) {
    if (sqlite3_bind_text(st, i++, p.data(), static_cast<int>(p.size()), SQLITE_TRANSIENT) !=
        SQLITE_OK) {
      return fail();
    }
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (rows) {
      const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      rows->emplace_back(t ? t : "");
    }
  }
  if (rc != SQLITE_DONE) return fail();
  sqlite3_finalize(st);
  return static_cast<std::int64_t>(sqlite3_changes(db));
}

/// The first column of every row of a query.
inline Result<std::vector<std::string>> column(sqlite3* db, const std::string& path,
                                               std::string_view query,
                                               std::initializer_list<std::string_view> params = {}) {
  std::vector<std::string> rows;
  KF_TRY(run(db, path, query, params, &rows));
  return rows;
}

/// The integer in the first column of the first row of a query (0 when no row).
inline Result<std::int64_t> count(sqlite3* db, const std::string& path, std::string_view query) {
  KF_TRY_ASSIGN(rows, column(db, path, query));
  return rows.empty() ? std::int64_t{0} : std::stoll(rows.front());
}

}  // namespace kforge::sql
