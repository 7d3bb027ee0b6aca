// One database a lookup searches (internal to the lookup): the user's, then
// the system's. Used only under the lookup's select mutex (a Database must
// not be used from two threads at once).
#pragma once

#include <memory>
#include <string>

#include "core/result.hpp"
#include "db/database.hpp"

namespace kforge {

struct LookupSource {
  std::string path;
  std::string role;  ///< "user" or "system"
  std::unique_ptr<Database> db;  ///< null when the file does not exist
  std::string note;  ///< why there is no db
  /// How it was opened: "read-only" or "read-only, immutable" (explain says which).
  std::string access;
};

/// Opens the `role` ("user" or "system") database at `path` without ever
/// writing to it or next to it. A missing file is a source with a note, not
/// an error.
///
/// SQLite reads a WAL-mode database through its -wal and -shm files, and a
/// read-only opener creates them when they are absent: a write into the
/// database's directory (by root even in a read-only one) and, for others, a
/// failure in a read-only directory. So:
///   system  shipped and never written while programs use it: opened
///           immutable (Database::Mode::kImmutable) when no -wal or -journal
///           file exists; read-only otherwise.
///   user    may be written by `kforge tune` while a program runs: opened
///           read-only, with SQLite's locking. Only when that fails in a
///           directory this process cannot write is it reopened immutable,
///           provided no -wal file holds changes.
/// A WAL database whose -wal file exists in a directory this process cannot
/// write, without a readable -shm, cannot be read consistently: a kBadInput
/// error naming the file and saying how to checkpoint it.
Result<std::unique_ptr<LookupSource>> open_lookup_source(const std::string& path, std::string role);

}  // namespace kforge
