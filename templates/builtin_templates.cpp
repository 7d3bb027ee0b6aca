// Looks up embedded templates and preludes.
#include "builtin_templates.hpp"

#include <functional>
#include <map>
#include <string>

namespace kforge {

static std::string_view find_file(std::string_view path) {
  for (const auto& f : embedded_template_files()) {
    if (f.path == path) return f.text;
  }
  return {};
}

/// Every backend's prelude file followed by the shared epilogue, by backend.
static std::map<std::string, std::string, std::less<>> composed_preludes() {
  constexpr std::string_view kDir = "prelude/", kExt = ".h", kShared = "prelude/epilogue.h";
  const std::string_view epilogue = find_file(kShared);
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& f : embedded_template_files()) {
    if (f.path == kShared || !f.path.starts_with(kDir) || !f.path.ends_with(kExt)) continue;
    std::string text(f.text);
    if (!text.empty() && text.back() != '\n') text += '\n';
    out.emplace(f.path.substr(kDir.size(), f.path.size() - kDir.size() - kExt.size()), text + std::string(epilogue));
  }
  return out;
}

std::string_view prelude_text(std::string_view backend) {
  static const auto preludes = composed_preludes();
  auto it = preludes.find(backend);
  return it == preludes.end() ? std::string_view() : std::string_view(it->second);
}

Result<std::vector<TemplateSource>> builtin_templates() {
  std::vector<TemplateSource> out;
  constexpr std::string_view kManifest = "/manifest.json";
  for (const auto& f : embedded_template_files()) {
    if (f.path.size() <= kManifest.size() || !f.path.ends_with(kManifest)) continue;
    std::string dir(f.path.substr(0, f.path.size() - kManifest.size()));
    auto manifest = TemplateManifest::parse(f.text, "builtin:" + std::string(f.path));
    if (!manifest.ok()) return manifest.error();
    std::string_view kernel =
        manifest->is_library() ? std::string_view() : find_file(dir + "/" + manifest->source);
    if (kernel.empty() && !manifest->is_library()) {
      return Error::internal("builtin:" + std::string(f.path) + ": source '" + manifest->source +
                             "' is not embedded");
    }
    KF_TRY_ASSIGN(tpl, TemplateSource::from_text(std::string(f.text), std::string(kernel),
                                                 "builtin:" + dir));
    out.push_back(std::move(tpl));
  }
  return out;
}

}  // namespace kforge
