// Looks up embedded templates and preludes.
#include "templates/builtin_templates.hpp"

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "generator/backend_traits.hpp"

namespace kforge {

static std::string_view find_file(std::string_view path) {
  for (const auto& f : embedded_template_files()) {
    if (f.path == path) return f.text;
  }
  return {};
}

/// The composed prelude of every backend (BackendTraits::prelude_files), by backend.
static std::map<std::string, std::string, std::less<>> composed_preludes() {
  std::map<std::string, std::string, std::less<>> out;
  for (const BackendTraits& backend : all_backends()) {
    std::string text;
    for (std::string_view file : backend.prelude_files) {
      text += find_file(file);
      if (!text.empty() && text.back() != '\n') text += '\n';
    }
    out.emplace(backend.name, std::move(text));
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
        manifest->has_source_file() ? find_file(dir + "/" + manifest->source) : std::string_view();
    if (kernel.empty() && manifest->has_source_file()) {
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
