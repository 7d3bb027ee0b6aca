#include "sweep_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "rank_databases.hpp"

namespace kforge::cli {

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[256];
  ssize_t n = 0;
  if (::lseek(fd, 0, SEEK_SET) < 0) return text;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  return text;
}

/// "pid 4242 on node7 since 2026-12-05T16:02:11Z": who holds the lock.
std::string holder_line() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + when;
}

}  // namespace

std::string SweepLock::path_for(const std::string& db_path) { return rank_databases_dir(db_path) + ".lock"; }

Result<SweepLock> SweepLock::acquire(const std::string& db_path) {
  const std::string path = path_for(db_path);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error::bad_input(path + ": cannot open the sweep lock: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::string holder = read_all(fd);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    ::close(fd);
    return Error::bad_input(db_path + ": another distributed sweep is using it (" +
                            (holder.empty() ? std::string("holder unknown") : holder) + ", lock " + path +
                            "); wait for it to end, or give this sweep another --db");
  }
  const std::string line = holder_line() + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, line.data(), line.size(), 0);  // a note for the refused
  return SweepLock(fd);
}

SweepLock::SweepLock(SweepLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

SweepLock::~SweepLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace kforge::cli
