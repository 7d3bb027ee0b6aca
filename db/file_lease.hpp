// An exclusive lease on a lock file beside a database: flock, so a holder
// that dies releases it (the kernel's lock, not a file's existence). The
// holder writes who it is into the file, for the message of whoever finds
// the lease taken. Used for one distributed sweep per database and one
// online tuner per database at a time.
#pragma once

#include <optional>
#include <string>

#include "core/result.hpp"

namespace kforge {

class FileLease {
 public:
  /// The lease on `path` (created when missing), or nullopt where another
  /// process holds it. An error only when the file cannot be opened.
  /// `what` ("an online tune of gemm/...") goes into the holder's note.
  static Result<std::optional<FileLease>> try_acquire(const std::string& path, const std::string& what);
  /// try_acquire, retried until `wait_s` seconds have passed; nullopt then.
  static Result<std::optional<FileLease>> acquire_within(const std::string& path, const std::string& what,
                                                         double wait_s);
  /// The holder's note: "pid 4242 on node7 since 2026-12-05T16:02:11Z: WHAT";
  /// "holder unknown" when the file says nothing.
  static std::string holder(const std::string& path);

  FileLease(FileLease&& other) noexcept;
  FileLease& operator=(FileLease&&) = delete;
  FileLease(const FileLease&) = delete;
  ~FileLease();

 private:
  explicit FileLease(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace kforge
