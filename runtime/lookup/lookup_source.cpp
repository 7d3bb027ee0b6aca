// Opening the lookup's databases read-only, WAL files in read-only places
// included (rules: lookup_source.hpp).
#include "runtime/lookup/lookup_source.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace kforge {

namespace {

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

/// Whether the file's SQLite header says WAL mode (bytes 18 and 19 are 2).
bool is_wal_mode(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[20] = {};
  if (!in.read(header, sizeof header)) return false;
  return header[18] == 2 && header[19] == 2;
}

bool directory_writable(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return access(dir.empty() ? "." : dir.c_str(), W_OK) == 0;
}

}  // namespace

Result<std::unique_ptr<LookupSource>> open_lookup_source(const std::string& path, std::string role) {
  auto source = std::make_unique<LookupSource>();
  source->path = path;
  source->role = std::move(role);
  if (!exists(path)) {
    source->note = "no " + source->role + " database at " + path;
    return source;
  }
  const bool wal_file = exists(path + "-wal");
  const bool quiet = !wal_file && !exists(path + "-journal");  // nothing half-written beside it
  if (source->role == "system" && quiet) {
    KF_TRY_ASSIGN(db, Database::open(path, Database::Mode::kImmutable));
    source->db = std::move(db);
    source->access = "read-only, immutable";
    return source;
  }
  auto db = Database::open(path, Database::Mode::kReadOnly);
  if (db.ok()) {
    source->db = std::move(*db);
    source->access = "read-only";
    return source;
  }
  if (directory_writable(path) || !is_wal_mode(path)) return db.error();
  // A WAL database where SQLite could not create its -shm (or -wal) file.
  if (!wal_file) {
    KF_TRY_ASSIGN(immutable, Database::open(path, Database::Mode::kImmutable));
    source->db = std::move(immutable);
    source->access = "read-only, immutable";
    return source;
  }
  return Error::bad_input(path + ": WAL database in a directory this process cannot write, with " +
                          path + "-wal present and no usable " + path +
                          "-shm: it cannot be read consistently; checkpoint it where it can be "
                          "written (sqlite3 " + path + " 'PRAGMA wal_checkpoint(TRUNCATE)') or make "
                          "the directory writable (" + db.error().message + ")");
}

}  // namespace kforge
