// Looks up embedded templates and preludes.
#include "builtin_templates.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kforge {

static std::string_view find_file(std::string_view path) {
  for (const auto& f : embedded_template_files()) {
    if (f.path == path) return f.text;
  }
  return {};
}

/// The shared files a backend's prelude appends to its own: CUDA and HIP
/// share gpu.h, and every backend ends with the row reductions and the
/// epilogue.
static std::vector<std::string_view> shared_parts(std::string_view backend) {
  if (backend == "cuda" || backend == "hip") return {"prelude/gpu.h", "prelude/rows.h", "prelude/epilogue.h"};
  return {"prelude/rows.h", "prelude/epilogue.h"};
}

static void append_file(std::string& out, std::string_view text) {
  out += text;
  if (!out.empty() && out.back() != '\n') out += '\n';
}

/// Every backend's prelude file followed by its shared parts, by backend.
static std::map<std::string, std::string, std::less<>> composed_preludes() {
  constexpr std::string_view kDir = "prelude/", kExt = ".h";
  const std::vector<std::string_view> shared = {"prelude/gpu.h", "prelude/rows.h", "prelude/epilogue.h"};
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& f : embedded_template_files()) {
    if (!f.path.starts_with(kDir) || !f.path.ends_with(kExt)) continue;
    if (std::find(shared.begin(), shared.end(), f.path) != shared.end()) continue;
    const std::string_view backend = f.path.substr(kDir.size(), f.path.size() - kDir.size() - kExt.size());
    std::string text;
    append_file(text, f.text);
    for (std::string_view part : shared_parts(backend)) append_file(text, find_file(part));
    out.emplace(std::string(backend), std::move(text));
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
