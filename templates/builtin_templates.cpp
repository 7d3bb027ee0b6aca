// Looks up embedded templates and preludes.
#include "builtin_templates.hpp"

#include <string>

namespace kforge {

static std::string_view find_file(std::string_view path) {
  for (const auto& f : embedded_template_files()) {
    if (f.path == path) return f.text;
  }
  return {};
}

std::string_view prelude_text(std::string_view backend) {
  return find_file("prelude/" + std::string(backend) + ".h");
}

Result<std::vector<TemplateSource>> builtin_templates() {
  std::vector<TemplateSource> out;
  constexpr std::string_view kManifest = "/manifest.json";
  for (const auto& f : embedded_template_files()) {
    if (f.path.size() <= kManifest.size() || !f.path.ends_with(kManifest)) continue;
    std::string dir(f.path.substr(0, f.path.size() - kManifest.size()));
    auto manifest = TemplateManifest::parse(f.text, "builtin:" + std::string(f.path));
    if (!manifest.ok()) return manifest.error();
    std::string_view kernel = find_file(dir + "/" + manifest->source);
    if (kernel.empty()) {
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
