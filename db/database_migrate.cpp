// Database::migrate: `kforge db migrate`, an explicit upgrade of an existing
// file (read-only opens, the runtime's, never migrate).
#include <sqlite3.h>

#include <filesystem>

#include "db/database.hpp"

namespace kforge {

Result<Database::MigrateReport> Database::migrate(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return Error::bad_input(path + ": no such database");
  MigrateReport report;
  {
    // The version before, read on a raw read-only connection; when the file
    // cannot be read, open() below reports why.
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        report.from = sqlite3_column_int(st, 0);
      }
      sqlite3_finalize(st);
    }
    sqlite3_close_v2(raw);
  }
  KF_TRY_ASSIGN(db, open(path, Mode::kReadWrite));
  report.to = db->schema_version();
  return report;
}

}  // namespace kforge
