// Every built-in template's kernel source gives each tunable the default its
// manifest declares: the manifest is the contract, the in-file `#ifndef`
// defaults only let the source compile alone.
#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <string>
#include <string_view>

#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

/// The next line of `text` from `pos` (advanced past it), spaces trimmed at both ends.
std::string_view next_line(std::string_view text, std::size_t& pos) {
  std::size_t end = text.find('\n', pos);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(pos, end - pos);
  pos = end + 1;
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
  return line;
}

/// The integer defaults a source sets as `#ifndef NAME` followed by
/// `#define NAME <integer>`, by name; other macros are left out.
std::map<std::string, std::string> in_file_defaults(std::string_view text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    if (!line.starts_with("#ifndef ")) continue;
    const std::string name(line.substr(8));
    std::string_view def = next_line(text, pos);
    const std::string prefix = "#define " + name + " ";
    if (!def.starts_with(prefix)) continue;
    def.remove_prefix(prefix.size());
    std::size_t digits = 0;
    while (digits < def.size() && std::isdigit(static_cast<unsigned char>(def[digits]))) ++digits;
    if (digits > 0) out[name] = std::string(def.substr(0, digits));
  }
  return out;
}

}  // namespace

TEST_CASE("in_file_defaults reads #ifndef/#define pairs", "[templates]") {
  const auto d = in_file_defaults(
      "#ifndef BM\n#define BM 64 /* rows */\n#endif\n  #ifndef BN\n  #define BN 128\n#endif\n"
      "#ifndef KF_KERNEL_NAME\n#define KF_KERNEL_NAME k\n#endif\n#define BK 8\n");
  CHECK(d == std::map<std::string, std::string>{{"BM", "64"}, {"BN", "128"}});
}

TEST_CASE("every built-in template's in-file defaults equal its manifest's", "[templates]") {
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  REQUIRE(builtins->size() >= 9);
  for (const auto& tpl : *builtins) {
    if (tpl.manifest.is_library()) continue;  // a library call has no source to give defaults in
    const auto defaults = in_file_defaults(tpl.kernel_text);
    for (const Parameter& p : tpl.manifest.parameters) {
      INFO(tpl.manifest.name << " (" << tpl.manifest.source << "): " << p.name);
      auto it = defaults.find(p.name);
      if (it == defaults.end())
        FAIL("no `#ifndef " << p.name << "` / `#define " << p.name << " N` default in the source");
      CHECK(it->second == std::to_string(p.default_value));
    }
  }
}
