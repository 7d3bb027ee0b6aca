// Examples at the foot of every command's --help: one or two real command
// lines per verb, kept in one table so a test can check them all.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kforge::cli {

struct HelpExamples {
  std::string path;                   ///< "tune", "db merge"
  std::vector<std::string> commands;  ///< full command lines, each starting with "kforge "
};

/// Every verb's examples, nested verbs by their path ("db export").
const std::vector<HelpExamples>& help_examples();

/// Sets each registered subcommand's --help footer from help_examples().
void add_help_examples(CLI::App& app);

}  // namespace kforge::cli
