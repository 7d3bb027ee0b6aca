// One distributed sweep per database at a time. Two MPI jobs on one --db
// would share DB.ranks/ and merge each other's live rank databases (rows
// were lost in 3 of 4 such runs). Rank 0 holds an exclusive lock on
// DB.ranks.lock for the job's life: a second job is refused naming the
// holder, and a holder that dies releases it (flock is the kernel's, not a
// file's existence).
#pragma once

#include <string>

#include "result.hpp"

namespace kforge::cli {

class SweepLock {
 public:
  /// Locks `db_path`'s rank folder for this process. kBadInput, naming the
  /// holder (pid, host, since), where another process holds it.
  static Result<SweepLock> acquire(const std::string& db_path);
  SweepLock(SweepLock&& other) noexcept;
  SweepLock& operator=(SweepLock&&) = delete;
  SweepLock(const SweepLock&) = delete;
  ~SweepLock();

  /// "DB.ranks.lock".
  static std::string path_for(const std::string& db_path);

 private:
  explicit SweepLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kforge::cli
