// Loading templates from a directory or from text, and the template hash.
#include "generator/template_source.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/hash.hpp"
#include "generator/operator_declaration.hpp"

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

/// `text` without its // and /* */ comments (string literals are rare in
/// kernels and left as they are).
std::string without_comments(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (text.compare(i, 2, "/*") == 0) {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
      continue;
    }
    if (i < text.size()) out += text[i];
  }
  return out;
}

bool has_word(const std::string& text, std::string_view word) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at == 0 || !ident(text[at - 1])) && (end == text.size() || !ident(text[end]))) return true;
  }
  return false;
}

/// The generator names each configuration's kernel through KF_KERNEL_NAME:
/// a kernel under its own name compiles and then is not found by the
/// backend, so a source that never says KF_KERNEL_NAME is refused here.
Status check_kernel_entry(std::string_view kernel_text, const std::string& kernel_path,
                          const std::string& manifest_kernel) {
  const std::string code = without_comments(kernel_text);
  if (has_word(code, "KF_KERNEL_NAME")) return ok_status();
  std::string found;
  if (has_word(code, manifest_kernel)) {
    found = " (it names '" + manifest_kernel + "', the manifest's kernel: rename that to KF_KERNEL_NAME)";
  }
  return Error::bad_input(kernel_path + ": the kernel must be named KF_KERNEL_NAME, as in " +
                          "`KF_KERNEL void KF_KERNEL_NAME(...)`: kforge defines that name per configuration" +
                          found);
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
  if (manifest.has_source_file()) {
    const std::filesystem::path kernel_path = std::filesystem::path(dir) / manifest.source;
    KF_TRY_ASSIGN(text, read_text(kernel_path, "kernel source named by " + manifest_path.string()));
    // A Triton kernel is named by its function; kforge's own by KF_KERNEL_NAME.
    if (manifest.kind != TemplateKindId::kTriton) KF_TRY(check_kernel_entry(text, kernel_path.string(), manifest.kernel));
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
