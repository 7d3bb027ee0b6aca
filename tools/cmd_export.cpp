// `kforge export`: tuning winners (or every result) as JSON, CSV, Markdown or
// a C++ header; `kforge import`: a JSON export back into a database.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string_view>

#include "core/printable.hpp"
#include "db/json_interchange.hpp"
#include "db/tuning_set.hpp"
#include "report/export_formats.hpp"
#include "tools/commands.hpp"
#include "tuner/build_version.hpp"

namespace kforge::cli {

namespace {

struct ExportOptions {
  std::string format = "json";
  std::string out;
  std::string device, op, dtype, layout, problem;
  std::string ns = "kforge_tuned";
  bool all_results = false;
  bool include_stale = false;
  bool winners_only = false;  ///< db export: only the winners' results
  bool json = false;          ///< db export --json: accepted; JSON is its only format
  bool summary = false;       ///< export --json: a JSON summary of what --out received
};

/// What `export --json` reports once the file is written (docs/cli.md).
nlohmann::json export_summary(const CommonOptions& o, const ExportOptions& s, const TuningSet& set,
                              std::size_t bytes, int stale_left_out) {
  return {{"database", o.db},          {"out", s.out},
          {"format", s.format},        {"bytes", bytes},
          {"devices", set.devices.size()}, {"templates", set.templates.size()},
          {"problems", set.problems.size()}, {"winners", set.winners.size()},
          {"results", set.results.size()}, {"all_results", s.all_results},
          {"stale_left_out", stale_left_out}};
}

std::optional<std::string> opt(const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); }

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw ErrorException(Error::bad_input(path + ": cannot write the export"));
}

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

/// Why `s` cannot name the header's namespace ("" when it can): each part
/// of `a::b` an identifier, neither a keyword nor reserved (`__x`, `_X`).
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

/// Registers the export flags and callback on `cmd`. A database dump (`db
/// export`) is always JSON and keeps every result and template version
/// unless told otherwise.
void configure_export(CLI::App* cmd, CommonOptions& o, bool dump) {
  // Every flag writes into *s, which the callback keeps alive: CLI11 writes
  // through these references when it parses, after this function returned.
  auto s = std::make_shared<ExportOptions>();
  add_db_option(*cmd, o, "Tuning database, or a JSON export to convert");
  if (dump) {
    cmd->add_flag("--json", s->json, "The JSON interchange format (the only format of db export)");
    cmd->add_flag("--winners-only", s->winners_only, "Only the winners' results, not every evaluated candidate");
  } else {
    cmd->add_option("--format", s->format, "json, csv, markdown (or md), header")
        ->check(CLI::IsMember({"json", "csv", "markdown", "md", "header"}))
        ->capture_default_str();
    cmd->add_flag("--all-results", s->all_results, "Every evaluated candidate, failures included, not only winners");
    cmd->add_flag("--include-stale", s->include_stale,
                  "Keep winners and results of template versions that are no longer current");
    cmd->add_option("--namespace", s->ns, "C++ namespace of the header format")->capture_default_str();
    cmd->add_flag("--json", s->summary, "After writing --out, print a JSON summary of what it holds (docs/cli.md)");
  }
  cmd->add_option("--out", s->out, "Write to this file instead of stdout");
  add_device_filter_flag(*cmd, s->device);
  cmd->add_option("--op", s->op, "Only this operator");
  cmd->add_option("--dtype", s->dtype, "Only this dtype (f32, f16, bf16)");
  cmd->add_option("--layout", s->layout, "Only this layout (NN, NT, TN, TT)");
  cmd->add_option("--problem", s->problem, "Only this problem key");
  add_template_flag(*cmd, o);
  cmd->callback([&o, s, dump] {
    if (dump) {
      s->format = "json";
      s->all_results = !s->winners_only;
      s->include_stale = true;
    }
    if (const std::string why = namespace_problem(s->ns); !why.empty())
      throw ErrorException(Error::bad_input("--namespace: " + why + ": '" + printable(s->ns) + "'"));
    if (s->summary && (s->out.empty() || s->out == "-")) {
      throw ErrorException(Error::bad_input("--json: the summary goes to stdout, so the export needs --out FILE"));
    }
    TuningFilter filter;
    filter.device = device_filter(s->device);
    filter.op = opt(s->op);
    filter.dtype = opt(s->dtype);
    filter.layout = opt(s->layout);
    filter.problem_key = opt(s->problem);
    filter.all_results = s->all_results;
    TuningSet set = unwrap(load_tuning_set(o.db, filter));
    const TemplateCatalog catalog = make_catalog(o);
    int dropped = 0;
    if (!s->include_stale) {
      set = without_stale(std::move(set), catalog, dropped);
      if (dropped > 0) {
        std::cerr << "kforge: left out " << dropped << " winner" << (dropped == 1 ? "" : "s")
                  << " of template versions that are no longer current (--include-stale keeps them)\n";
      }
    }
    if (!dump) {
      // A database is input: rows the lookup would refuse are not exported
      // (a dump keeps every row, for a backup).
      std::vector<std::string> skipped;
      set = without_undeclared(std::move(set), catalog, skipped);
      for (const auto& line : skipped) std::cerr << "kforge: warning: skipped " << line << "\n";
    }
    if (s->all_results && !set.filter.all_results) {
      std::cerr << "kforge: " << o.db << " holds winners only (exported without --all-results)\n";
    }
    std::string text;
    if (s->format == "json") {
      text = to_interchange_json(set, version_line()).dump(2) + "\n";
    } else {
      const auto rows = export_rows(set, catalog);
      if (s->format == "csv") text = render_csv(set, rows);
      else if (s->format == "header") text = render_header(set, rows, s->ns);
      else text = render_markdown(set, rows);
    }
    write_output(s->out, text);
    if (s->summary) print_json(export_summary(o, *s, set, text.size(), dropped));
  });
}

void configure_import(CLI::App* cmd, CommonOptions& o) {
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "JSON export to read")->required();
  add_db_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->callback([&o, file] {
    std::ifstream in(*file, std::ios::binary);
    if (!in) throw ErrorException(Error::bad_input(*file + ": cannot open file"));
    std::stringstream text;
    text << in.rdbuf();
    TuningSet set = unwrap(parse_interchange_json(text.str(), *file));
    auto db = unwrap(Database::open(o.db, Database::Mode::kReadWrite));
    const ImportCounts c = unwrap(import_tuning_set(*db, set));
    if (o.json) {
      print_json({{"file", *file},
                  {"database", o.db},
                  {"devices", c.devices},
                  {"templates", c.templates},
                  {"problems", c.problems},
                  {"sweeps_added", c.sweeps_added},
                  {"sweeps_found", c.sweeps_found},
                  {"results_added", c.results_added},
                  {"results_present", c.results_present},
                  {"counters_added", c.counters_added},
                  {"counters_present", c.counters_present},
                  {"winners_in_file", set.winners.size()}});
      return;
    }
    std::cout << "imported " << *file << " into " << o.db << ": " << c.results_added << " result"
              << (c.results_added == 1 ? "" : "s") << " added, " << c.results_present << " already present; "
              << c.counters_added << " counters rows added, " << c.counters_present << " already present; "
              << c.sweeps_added << " sweep" << (c.sweeps_added == 1 ? "" : "s") << " added, " << c.sweeps_found
              << " found; " << c.devices << " devices, " << c.problems << " problems, " << c.templates
              << " template versions\n";
  });
}

const char* kExportHelp =
    "Export tuning winners (or every result with --all-results) as JSON, CSV, Markdown or a C++ header.\n"
    "JSON is the versioned interchange format that `kforge import` and `kforge compare` read; CSV and\n"
    "Markdown are tables for people and spreadsheets; the header is a constexpr table a program compiles\n"
    "in without SQLite. Winners recorded under a template version that is no longer current are left out\n"
    "unless --include-stale. Formats: docs/export.md.";
const char* kImportHelp =
    "Import a JSON export (kforge export --format json) into a tuning database, creating it if needed.\n"
    "Devices, template versions and problems are matched by key; a result already stored for the same\n"
    "device, template version, problem and configuration is kept; winners are recomputed. The file is\n"
    "checked whole before anything is written. Format: docs/export.md.";

}  // namespace

void add_export_command(CLI::App& app, CommonOptions& o) {
  configure_export(app.add_subcommand("export", kExportHelp), o, false);
  configure_export(db_command(app).add_subcommand(
                       "export",
                       "Dump a tuning database as JSON (the interchange format of docs/export.md): every result and\n"
                       "template version, for `kforge db import` or `kforge import` elsewhere. Same filters as\n"
                       "`kforge export`."),
                   o, true);
}

void add_import_command(CLI::App& app, CommonOptions& o) {
  configure_import(app.add_subcommand("import", kImportHelp), o);
  configure_import(db_command(app).add_subcommand("import", kImportHelp), o);
}

}  // namespace kforge::cli
