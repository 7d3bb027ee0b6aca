// The relay thread of a worker's stderr.
#include "tuner/worker/stderr_relay.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <string>
#include <system_error>
#include <thread>

namespace kforge {

namespace {

/// Skips the digits at `at`; false when there are none.
bool digits(std::string_view s, std::size_t& at) {
  const std::size_t from = at;
  while (at < s.size() && std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
  return at > from;
}

/// Skips " warning" or " error" with an optional "s" at `at`.
bool kind(std::string_view s, std::size_t& at) {
  for (std::string_view k : {std::string_view(" warning"), std::string_view(" error")}) {
    if (s.substr(at, k.size()) == k) {
      at += k.size();
      if (at < s.size() && s[at] == 's') ++at;
      return true;
    }
  }
  return false;
}

void write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w <= 0) return;  // stderr gone: nothing left to tell
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

void relay(int fd) {
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      if (!is_diagnostic_count(std::string_view(pending).substr(0, nl))) write_all(STDERR_FILENO, pending.data(), nl + 1);
      pending.erase(0, nl + 1);
    }
  }
  if (!pending.empty() && !is_diagnostic_count(pending)) write_all(STDERR_FILENO, pending.data(), pending.size());
  close(fd);
}

}  // namespace

bool is_diagnostic_count(std::string_view line) {
  std::size_t at = 0;
  if (!digits(line, at) || !kind(line, at)) return false;
  if (line.substr(at, 5) == " and ") {
    at += 5;
    if (!digits(line, at) || !kind(line, at)) return false;
  }
  return line.substr(at) == " generated.";
}

int start_stderr_relay() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  try {
    std::thread(relay, fds[0]).detach();
  } catch (const std::system_error&) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  return fds[1];
}

}  // namespace kforge
