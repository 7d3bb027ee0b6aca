// Registration of each kforge subcommand on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include "tools/cli_common.hpp"

namespace kforge::cli {

void add_devices_command(CLI::App& app, CommonOptions& o);
void add_templates_command(CLI::App& app, CommonOptions& o);
void add_tune_command(CLI::App& app, CommonOptions& o);
void add_show_command(CLI::App& app, CommonOptions& o);
void add_lookup_command(CLI::App& app, CommonOptions& o);
void add_compile_command(CLI::App& app, CommonOptions& o);
/// `kforge db verify|merge|migrate` (cmd_db.cpp).
void add_db_command(CLI::App& app, CommonOptions& o);
/// The `db` command group, created on first use: other `db` subcommands attach here.
CLI::App& db_command(CLI::App& app);
void add_export_command(CLI::App& app, CommonOptions& o);
void add_import_command(CLI::App& app, CommonOptions& o);
void add_compare_command(CLI::App& app, CommonOptions& o);
void add_capabilities_command(CLI::App& app, CommonOptions& o);
void add_report_command(CLI::App& app, CommonOptions& o);
void add_inspect_command(CLI::App& app, CommonOptions& o);
/// `kforge sweep PLAN` (cmd_sweep.cpp, docs/sweep.md).
void add_sweep_command(CLI::App& app, CommonOptions& o);
/// `kforge ceilings` (cmd_ceilings.cpp): the device's measured peaks.
void add_ceilings_command(CLI::App& app, CommonOptions& o);

}  // namespace kforge::cli
