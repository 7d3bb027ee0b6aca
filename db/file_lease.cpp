#include "db/file_lease.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/utc_time.hpp"

namespace kforge {

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[256];
  ssize_t n = 0;
  if (::lseek(fd, 0, SEEK_SET) < 0) return text;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

std::string holder_line(const std::string& what) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + utc_now() +
         (what.empty() ? "" : ": " + what);
}

}  // namespace

Result<std::optional<FileLease>> FileLease::try_acquire(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error::bad_input(path + ": cannot open the lock file: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return std::optional<FileLease>();
  }
  const std::string line = holder_line(what) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, line.data(), line.size(), 0);  // a note for the refused
  return std::optional<FileLease>(FileLease(fd));
}

Result<std::optional<FileLease>> FileLease::acquire_within(const std::string& path, const std::string& what,
                                                           double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    KF_TRY_ASSIGN(lease, try_acquire(path, what));
    if (lease || std::chrono::steady_clock::now() >= deadline) return lease;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string FileLease::holder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "holder unknown";
  std::string text = read_all(fd);
  ::close(fd);
  return text.empty() ? "holder unknown" : text;
}

FileLease::FileLease(FileLease&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

FileLease::~FileLease() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
}

}  // namespace kforge
