// Registration of each kforge subcommand on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

#include "cli_common.hpp"

namespace kforge::cli {

void add_devices_command(CLI::App& app, CommonOptions& o);
void add_templates_command(CLI::App& app, CommonOptions& o);
void add_tune_command(CLI::App& app, CommonOptions& o);
void add_show_command(CLI::App& app, CommonOptions& o);
void add_lookup_command(CLI::App& app, CommonOptions& o);

}  // namespace kforge::cli
