// Problem keys and dimension parsing.
#include "problem.hpp"

#include <charconv>

namespace kforge {

std::string Problem::dims_string() const {
  std::string s;
  for (const auto& [k, v] : dims) {
    if (!s.empty()) s += ',';
    s += k + "=" + std::to_string(v);
  }
  return s;
}

std::string Problem::key() const {
  return op + "/" + dims_string() + "/" + std::string(dtype_name(dtype)) + "/" + layout.name();
}

std::int64_t Problem::dim(const std::string& name) const {
  auto it = dims.find(name);
  return it == dims.end() ? 0 : it->second;
}

Result<std::map<std::string, std::int64_t>> parse_dims(std::string_view text) {
  std::map<std::string, std::int64_t> dims;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error::bad_input("shape '" + std::string(text) + "': expected NAME=VALUE, got '" +
                              std::string(item) + "'");
    }
    std::string name(item.substr(0, eq));
    std::string_view num = item.substr(eq + 1);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size() || v <= 0) {
      return Error::bad_input("shape '" + std::string(text) + "': " + name +
                              " must be a positive integer, got '" + std::string(num) + "'");
    }
    if (!dims.emplace(name, v).second) {
      return Error::bad_input("shape '" + std::string(text) + "': " + name + " given twice");
    }
    pos = end + 1;
  }
  return dims;
}

}  // namespace kforge
