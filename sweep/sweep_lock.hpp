// One distributed sweep per database at a time. Two MPI jobs on one --db
// would share DB.ranks/ and merge each other's live rank databases (rows
// were lost in 3 of 4 such runs). Rank 0 holds an exclusive lease on
// DB.ranks.lock for the job's life (db/file_lease.hpp): a second job is
// refused naming the holder, and a holder that dies releases it.
#pragma once

#include <string>

#include "core/result.hpp"
#include "db/file_lease.hpp"

namespace kforge {

class SweepLock {
 public:
  /// Locks `db_path`'s rank folder for this process. kBadInput, naming the
  /// holder (pid, host, since), where another process holds it.
  static Result<SweepLock> acquire(const std::string& db_path);

  /// "DB.ranks.lock".
  static std::string path_for(const std::string& db_path);

 private:
  explicit SweepLock(FileLease lease) : lease_(std::move(lease)) {}
  FileLease lease_;
};

}  // namespace kforge
