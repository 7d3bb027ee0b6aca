// Echoing user text inside one-line error messages.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace kforge {

/// `text` with control characters escaped (\n, \t, \xNN), so that an error
/// message that quotes user input stays on one line.
inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace kforge
