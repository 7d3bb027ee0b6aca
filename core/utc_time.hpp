// The time as kforge writes it everywhere: ISO 8601 UTC to the second
// (2026-12-05T16:02:11Z), in every table's timestamps, logs and lock notes.
#pragma once

#include <ctime>
#include <string>

namespace kforge {

inline std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace kforge
