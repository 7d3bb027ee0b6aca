// The export pipeline behind `kforge export` and kforge.export().
#include "report/export_tuning.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>

#include "core/printable.hpp"
#include "db/json_interchange.hpp"
#include "report/export_formats.hpp"

namespace kforge::report {

namespace {

/// The C++ keywords (C++20), which no namespace may be named.
bool is_keyword(std::string_view s) {
  static const std::set<std::string_view> kKeywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default",
      "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new",
      "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true",
      "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq"};
  return kKeywords.count(s) > 0;
}

const std::set<std::string> kFormats = {"json", "csv", "markdown", "md", "header"};

}  // namespace

std::string namespace_problem(const std::string& s) {
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = std::min(s.find("::", begin), s.size());
    const std::string part = s.substr(begin, end - begin);
    const bool identifier = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0])) &&
                            std::all_of(part.begin(), part.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
    if (!identifier) return "not a C++ namespace";
    if (is_keyword(part)) return "'" + part + "' is a C++ keyword";
    const bool reserved = part.rfind("__", 0) == 0 ||
                          (part[0] == '_' && part.size() > 1 && std::isupper(static_cast<unsigned char>(part[1])));
    if (reserved) return "'" + part + "' is reserved to the implementation";
    if (end == s.size()) return "";
    begin = end + 2;
  }
}

Result<ExportOutput> export_tuning(const std::string& source, const ExportRequest& request,
                                   const TemplateCatalog& catalog) {
  if (!kFormats.count(request.format)) {
    return Error::bad_input("format: '" + printable(request.format) + "' is not json, csv, markdown, md or header");
  }
  if (const std::string why = namespace_problem(request.ns); !why.empty()) {
    return Error::bad_input("namespace: " + why + ": '" + printable(request.ns) + "'");
  }
  ExportOutput out;
  KF_TRY_ASSIGN(set, load_tuning_set(source, request.filter));
  out.set = std::move(set);
  if (!request.include_stale) out.set = without_stale(std::move(out.set), catalog, out.stale_left_out);
  if (!request.keep_undeclared) out.set = without_undeclared(std::move(out.set), catalog, out.skipped);
  if (request.format == "json") {
    out.text = to_interchange_json(out.set, request.exported_by).dump(2) + "\n";
    return out;
  }
  const auto rows = export_rows(out.set, catalog);
  if (request.format == "csv") out.text = render_csv(out.set, rows);
  else if (request.format == "header") out.text = render_header(out.set, rows, request.ns);
  else out.text = render_markdown(out.set, rows);
  return out;
}

}  // namespace kforge::report
