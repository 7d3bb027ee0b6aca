// Shared pieces of the kforge CLI: common flags, turning flags into a problem,
// and the error edge (library Results become exceptions only here).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/exit_status.hpp"
#include "core/result.hpp"
#include "generator/problem.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/backend.hpp"

namespace kforge::cli {

/// Exit codes and ExitStatus (docs/cli.md) are core/exit_status.hpp's.
using kforge::ExitStatus;
using kforge::kExitBadInput;
using kforge::kExitFailure;
using kforge::kExitNoCandidatePassed;
using kforge::kExitRegression;

/// Version of every JSON object the CLI writes to stdout (docs/cli.md); bump
/// it when a field changes meaning or goes away.
inline constexpr int kCliJsonSchemaVersion = 1;

/// Flags shared by several commands; each command registers the ones it uses.
struct CommonOptions {
  std::string db = "kforge.db";
  std::string device = "auto";
  std::string op = "gemm";
  /// --op was given; without it a --template directory's declared operator
  /// (operator.json) is the one tuned.
  bool op_given = false;
  std::string shape;  ///< empty: the operator's default_dims()
  std::string dtype = "f32";
  std::string layout = "NN";
  std::string epilogue = "none";
  std::string attrs;
  std::vector<std::string> template_dirs;
  bool json = false;
};

void add_db_flag(CLI::App& cmd, CommonOptions& o);
/// `--db` on `cmd` with its own help text; an empty path is rejected.
CLI::Option* add_db_option(CLI::App& cmd, CommonOptions& o, const std::string& help);
/// --device for commands that run on a device (tune, lookup, sweep).
void add_device_flag(CLI::App& cmd, CommonOptions& o);
/// --device for commands that read stored rows (export, report, compare):
/// the same texts name the same device (runtime/device/device_registry.hpp).
void add_device_filter_flag(CLI::App& cmd, std::string& device);
/// A TuningFilter::device from a --device text: a live selector ("auto",
/// "opencl:0") becomes that device's hardware key; other texts match as given.
std::optional<std::string> device_filter(const std::string& text);
void add_problem_flags(CLI::App& cmd, CommonOptions& o);
void add_template_flag(CLI::App& cmd, CommonOptions& o);
void add_json_flag(CLI::App& cmd, CommonOptions& o);

/// Throws ErrorException when the Result holds an error.
template <typename T>
T unwrap(Result<T> r) {
  if (!r.ok()) throw ErrorException(r.error());
  return std::move(r).value();
}

/// The operator a command runs: --op, else the one a --template declares, else gemm.
std::string operator_name(const CommonOptions& o);
/// The problem of the flags; a declared operator must be registered first (make_catalog).
Problem make_problem(const CommonOptions& o);
TemplateCatalog make_catalog(const CommonOptions& o);
std::unique_ptr<Device> open_device(const CommonOptions& o);

/// The command line kforge was started with, recorded with each sweep.
std::string& command_line();

/// Validators that reject what CLI11's own accept or print unreadably: an
/// empty path (SQLite would open a temporary database and keep nothing), NaN
/// and infinity, and a bound printed as 309 digits.
CLI::Validator non_empty_path();
CLI::Validator finite_at_least(double min, bool inclusive = true);
CLI::Validator integer_at_least(long long min);

/// Writes `j` to stdout; an object gets `schema_version` (kCliJsonSchemaVersion)
/// unless it has its own.
void print_json(const nlohmann::json& j);
/// The error edge: "kforge: error: MESSAGE", or with `json` one JSON object
/// {"error", "file", "field", "value"} on stderr (docs/cli.md, "Errors").
void print_error(const std::string& message, bool json);
/// The file, field and value an error message names ("FILE: FIELD: ... 'VALUE'"),
/// null where it names none.
nlohmann::json error_json(const std::string& message);
/// Fixed-width table on stdout: header row, then rows.
void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);
std::string fmt(double v, int precision = 4);

}  // namespace kforge::cli
