// Parsing and applying the library policy.
#include "runtime/libraries/library_policy.hpp"

#include <cctype>
#include <cstdlib>

#include "core/printable.hpp"

namespace kforge {

std::string_view library_policy_name(LibraryPolicy p) {
  switch (p) {
    case LibraryPolicy::kCompare:
      return "compare";
    case LibraryPolicy::kForbid:
      return "forbid";
    case LibraryPolicy::kForce:
      return "force";
  }
  return "compare";
}

std::optional<LibraryPolicy> parse_library_policy(std::string_view text) {
  for (LibraryPolicy p : {LibraryPolicy::kCompare, LibraryPolicy::kForbid, LibraryPolicy::kForce}) {
    if (text == library_policy_name(p)) return p;
  }
  return std::nullopt;
}

std::string library_policy_variable(std::string_view op) {
  std::string var = "KFORGE_LIBRARY_";
  for (char c : op) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return var;
}

Result<LibraryPolicy> library_policy_from_env(std::string_view op) {
  const std::string var = library_policy_variable(op);
  const char* value = std::getenv(var.c_str());
  if (value == nullptr || *value == '\0') return LibraryPolicy::kCompare;
  if (auto p = parse_library_policy(value)) return *p;
  return Error::bad_input(var + "='" + printable(value) + "': expected compare, forbid or force");
}

bool policy_admits(LibraryPolicy p, const TemplateManifest& m) {
  switch (p) {
    case LibraryPolicy::kCompare:
      return true;
    case LibraryPolicy::kForbid:
      return !m.is_library();
    case LibraryPolicy::kForce:
      return m.is_library();
  }
  return true;
}

}  // namespace kforge
