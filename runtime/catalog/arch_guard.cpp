// Matching architecture guards ("sm_80+", "sm_90a", "gfx90a", "gfx9+").
#include "runtime/catalog/arch_guard.hpp"

#include <cctype>
#include <optional>

#include "generator/backend_traits.hpp"

namespace kforge {

namespace {

struct SmArch {
  int number = 0;       ///< 90 for sm_90 and sm_90a
  bool a_suffix = false;
};

/// "sm_90" -> {90, false}; "sm_90a" -> {90, true}; otherwise nullopt.
std::optional<SmArch> parse_sm(const std::string& s) {
  if (s.rfind("sm_", 0) != 0 || s.size() < 5) return std::nullopt;
  SmArch a;
  std::size_t i = 3;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) a.number = a.number * 10 + (s[i++] - '0');
  if (i == 3) return std::nullopt;
  if (i < s.size() && (s[i] == 'a' || s[i] == 'f')) {
    a.a_suffix = true;
    ++i;
  }
  if (i != s.size()) return std::nullopt;
  return a;
}

bool is_gfx(const std::string& s) {
  if (s.rfind("gfx", 0) != 0 || s.size() < 4) return false;
  for (std::size_t i = 3; i < s.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

bool entry_matches(const std::string& entry, const std::string& backend, const std::string& arch_in) {
  const std::string arch = arch_in.substr(0, arch_in.find(':'));
  const bool plus = !entry.empty() && entry.back() == '+';
  const std::string base = plus ? entry.substr(0, entry.size() - 1) : entry;
  const std::string_view cuda_prefix = backend_traits(BackendId::kCuda).arch_prefix;
  if (base.rfind(cuda_prefix, 0) == 0) {
    if (!is_backend(backend, BackendId::kCuda)) return false;
    auto want = parse_sm(base);
    auto have = parse_sm(arch);
    if (!want || !have) return false;
    if (plus) return have->number >= want->number;
    return have->number == want->number && have->a_suffix == want->a_suffix;
  }
  if (!is_backend(backend, BackendId::kHip) || !is_gfx(arch)) return false;
  if (plus) return arch.rfind(base, 0) == 0;  // "gfx9+" matches gfx900 .. gfx9xx
  return arch == base;
}

}  // namespace

Status check_arch_guard_entry(const std::string& entry) {
  const bool plus = !entry.empty() && entry.back() == '+';
  const std::string base = plus ? entry.substr(0, entry.size() - 1) : entry;
  if (parse_sm(base)) {
    if (plus && parse_sm(base)->a_suffix) {
      return Error::bad_input("arch_guard entry '" + entry + "': an a-suffixed architecture cannot take '+'");
    }
    return ok_status();
  }
  if (is_gfx(base)) return ok_status();
  return Error::bad_input("arch_guard entry '" + entry +
                          "': expected sm_NN, sm_NN+, sm_NNa, gfxNNN or gfxN+ (e.g. sm_80+, gfx90a)");
}

Status check_arch_guard(const TemplateManifest& m, const std::string& backend, const std::string& arch) {
  if (m.arch_guard.empty()) return ok_status();
  std::string list;
  for (const auto& e : m.arch_guard) {
    KF_TRY(check_arch_guard_entry(e));
    if (entry_matches(e, backend, arch)) return ok_status();
    list += (list.empty() ? "" : " or ") + e;
  }
  return Error{ErrorCode::kUnsupported,
               m.name + " requires " + list + " (device is " + (arch.empty() ? backend : arch) +
                   (is_backend(backend, BackendId::kCuda) || is_backend(backend, BackendId::kHip) ? "" : ", backend " + backend) + ")",
               {}};
}

}  // namespace kforge
