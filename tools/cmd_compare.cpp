// `kforge compare BASE NEW`: per (device, problem), the winner's time in both
// tuning sets, their ratio and a verdict that accounts for timing noise.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "db/tuning_set.hpp"
#include "report/set_comparison.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct CompareOptions {
  std::string base, neu;
  std::string device, op, dtype, layout;
  std::string markdown_out;
};

std::optional<std::string> opt(const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); }

}  // namespace

void add_compare_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two tuning runs (databases or JSON exports): per device and problem, the winner's median\n"
      "time in BASE and NEW, the ratio NEW/BASE and a verdict (faster, slower, same) from the stored timing\n"
      "distributions: a change counts only when the 95% bootstrap interval of the ratio of medians excludes 1\n"
      "and the ratio lies outside the runs' own noise band (docs/compare.md). Exit code 3 when anything is\n"
      "slower beyond noise or lost its winner (every candidate failed), so CI can gate on it; 0 otherwise.");
  auto s = std::make_shared<CompareOptions>();
  cmd->add_option("BASE", s->base, "Baseline: tuning database or JSON export")->required()->check(non_empty_path());
  cmd->add_option("NEW", s->neu, "Candidate: tuning database or JSON export")->required()->check(non_empty_path());
  add_device_filter_flag(*cmd, s->device);
  cmd->add_option("--op", s->op, "Only this operator");
  cmd->add_option("--dtype", s->dtype, "Only this dtype");
  cmd->add_option("--layout", s->layout, "Only this layout");
  cmd->add_option("--markdown-out", s->markdown_out, "Also write the Markdown report to this file");
  add_json_flag(*cmd, o);
  cmd->callback([&o, s] {
    TuningFilter filter;
    filter.device = device_filter(s->device);
    filter.op = opt(s->op);
    filter.dtype = opt(s->dtype);
    filter.layout = opt(s->layout);
    filter.all_results = true;  // failed results tell "lost its winner" from "not tuned"
    const TuningSet base = unwrap(load_tuning_set(s->base, filter));
    const TuningSet neu = unwrap(load_tuning_set(s->neu, filter));
    const Comparison c = compare_sets(base, neu);
    const std::string markdown = render_comparison_markdown(c);
    if (!s->markdown_out.empty()) {
      std::ofstream f(s->markdown_out, std::ios::binary);
      f << markdown;
      f.close();
      if (!f) throw ErrorException(Error::bad_input(s->markdown_out + ": cannot write the report"));
    }
    if (o.json) {
      print_json(comparison_json(c));
    } else {
      std::cout << markdown;
    }
    if (c.regressed()) {
      std::cout.flush();
      std::cerr << "kforge: regressed: " << c.count("slower") << " slower beyond noise, " << c.count("failed")
                << " lost their winner\n";
      throw ExitStatus{kExitRegression};
    }
  });
}

}  // namespace kforge::cli
