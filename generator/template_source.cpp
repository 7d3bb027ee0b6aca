// Loading templates from a directory or from text, and the template hash.
#include "template_source.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "hash.hpp"
#include "operator_declaration.hpp"

namespace kforge {

namespace {

Result<std::string> read_text(const std::filesystem::path& path, const std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Error::not_found(path.string() + ": " + why + ": no such file");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return Error::bad_input(path.string() + ": " + why + ": is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path.string() + ": " + why + ": cannot open the file");
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return Error::bad_input(path.string() + ": " + why + ": read error");
  return text;
}

}  // namespace

Result<TemplateSource> TemplateSource::load_dir(const std::string& dir) {
  const std::filesystem::path manifest_path = std::filesystem::path(dir) / "manifest.json";
  KF_TRY_ASSIGN(manifest_text, read_text(manifest_path, "template manifest"));
  KF_TRY_ASSIGN(declaration, OperatorDeclaration::load_dir(dir));
  KF_TRY_ASSIGN(manifest, TemplateManifest::parse(manifest_text, manifest_path.string()));
  if (declaration && declaration->name != manifest.op) {
    return Error::bad_input(manifest_path.string() + ": operator: '" + manifest.op + "', but " +
                            declaration->path + " beside it declares '" + declaration->name + "'");
  }
  std::string kernel_text;
  if (!manifest.is_library()) {
    const std::filesystem::path kernel_path = std::filesystem::path(dir) / manifest.source;
    KF_TRY_ASSIGN(text, read_text(kernel_path, "kernel source named by " + manifest_path.string()));
    kernel_text = std::move(text);
  }
  TemplateSource t;
  t.manifest = std::move(manifest);
  t.manifest_text = std::move(manifest_text);
  t.kernel_text = std::move(kernel_text);
  if (declaration) t.operator_text = declaration->canonical;
  t.origin = dir;
  return t;
}

Result<TemplateSource> TemplateSource::from_text(std::string manifest_text, std::string kernel_text,
                                                 const std::string& origin) {
  const std::string path = origin.empty() ? "manifest.json" : origin + "/manifest.json";
  KF_TRY_ASSIGN(manifest, TemplateManifest::parse(manifest_text, path));
  TemplateSource t;
  t.manifest = std::move(manifest);
  t.manifest_text = std::move(manifest_text);
  t.kernel_text = std::move(kernel_text);
  t.origin = origin;
  return t;
}

std::string TemplateSource::hash(std::string_view prelude_text) const {
  Hasher h;
  h.add(manifest_text).add(kernel_text).add(prelude_text);
  if (!operator_text.empty()) h.add(operator_text);  // built-in templates keep their hashes
  if (manifest.is_library()) h.add(library_identity);
  return h.hex();
}

}  // namespace kforge
