// Device matching by key, arch, backend:arch or name.
#include "db/device_match.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace kforge {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool device_matches(std::string_view text, const DeviceRecord& d) {
  if (text.empty()) return false;
  if (d.key == text || d.arch == text || d.backend + ":" + d.arch == text) return true;
  return lower(d.name).find(lower(text)) != std::string::npos;
}

}  // namespace kforge
