// `kforge export`: tuning winners (or every result) as JSON, CSV, Markdown or
// a C++ header; `kforge import`: a JSON export back into a database.
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/printable.hpp"
#include "db/json_interchange.hpp"
#include "db/tuning_set.hpp"
#include "report/export_binaries.hpp"
#include "report/export_tuning.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "tools/commands.hpp"
#include "tuner/build_version.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

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
  std::string binaries;       ///< --binaries DIR: the winners' compiled binaries go there
  std::string cache_dir;      ///< --cache-dir: the binary cache they come from ("": the default)
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

/// --binaries: the winners' binaries copied, what could not be said on stderr.
BinaryExport copy_binaries(const TuningSet& set, const ExportOptions& s) {
  const std::string cache = s.cache_dir.empty() ? BinaryCache::default_dir() : s.cache_dir;
  BinaryExport b = unwrap(export_binaries(set, cache, s.binaries));
  std::cerr << "kforge: copied " << b.copied << " binar" << (b.copied == 1 ? "y" : "ies") << " to " << s.binaries
            << "\n";
  for (const auto& line : b.missing) std::cerr << "kforge: warning: no binary of " << line << "\n";
  return b;
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
    cmd->add_option("--binaries", s->binaries,
                    "Also copy the winners' compiled binaries from the binary cache into this folder, in the "
                    "cache's layout (docs/export.md, \"Binaries\")")
        ->check(non_empty_path());
    cmd->add_option("--cache-dir", s->cache_dir, "The binary cache --binaries copies from (default: the tuner's)")
        ->check(non_empty_path());
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
    ExportRequest request;
    request.format = s->format;
    request.filter.device = device_filter(s->device);
    request.filter.op = opt(s->op);
    request.filter.dtype = opt(s->dtype);
    request.filter.layout = opt(s->layout);
    request.filter.problem_key = opt(s->problem);
    request.filter.all_results = s->all_results;
    request.include_stale = s->include_stale;
    // A database is input: rows the lookup would refuse are not exported
    // (a dump keeps every row, for a backup).
    request.keep_undeclared = dump;
    request.ns = s->ns;
    request.exported_by = version_line();
    ExportOutput exported = unwrap(export_tuning(o.db, request, make_catalog(o)));
    const TuningSet& set = exported.set;
    const int dropped = exported.stale_left_out;
    if (dropped > 0) {
      std::cerr << "kforge: left out " << dropped << " winner" << (dropped == 1 ? "" : "s")
                << " of template versions that are no longer current (--include-stale keeps them)\n";
    }
    for (const auto& line : exported.skipped) std::cerr << "kforge: warning: skipped " << line << "\n";
    if (s->all_results && !set.filter.all_results) {
      std::cerr << "kforge: " << o.db << " holds winners only (exported without --all-results)\n";
    }
    const std::string& text = exported.text;
    write_output(s->out, text);
    std::optional<BinaryExport> binaries;
    if (!s->binaries.empty()) binaries = copy_binaries(set, *s);
    nlohmann::json summary = export_summary(o, *s, set, text.size(), dropped);
    if (binaries) summary["binaries"] = {{"dir", s->binaries}, {"copied", binaries->copied}, {"missing", binaries->missing}};
    if (s->summary) print_json(summary);
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
