// `kforge report`: a self-contained HTML page of the tuning runs in a
// database or JSON export (docs/report.md).
#include <fstream>
#include <iostream>
#include <set>

#include "db/tuning_set.hpp"
#include "report/report_renderer.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct ReportCliOptions {
  std::string out = "kforge-report.html";
  std::string device, op, dtype, layout, problem, ceilings, title;
};

std::optional<std::string> opt(const std::string& s) { return s.empty() ? std::nullopt : std::optional(s); }

}  // namespace

void add_report_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write a self-contained HTML report (inline SVG, no script, no network) of the tuning runs in a\n"
      "database or a JSON export: per tuned device and problem, the tuning landscape (every candidate's\n"
      "time, failures marked by status), the best time so far against evaluations, the winner against each\n"
      "template's default configuration, and achieved throughput against the device's ceilings (a roofline)\n"
      "where they are known. Open the file in any browser. Details: docs/report.md.");
  auto s = std::make_shared<ReportCliOptions>();
  add_db_option(*cmd, o, "Tuning database, or a JSON export (with --all-results for failures)");
  cmd->add_option("--out", s->out, "HTML file to write")->capture_default_str();
  add_device_filter_flag(*cmd, s->device);
  cmd->add_option("--op", s->op, "Only this operator");
  cmd->add_option("--dtype", s->dtype, "Only this dtype");
  cmd->add_option("--layout", s->layout, "Only this layout");
  cmd->add_option("--problem", s->problem, "Only this problem key");
  cmd->add_option("--ceilings", s->ceilings,
                  "JSON file of device peaks (fp32_gflops, fp16_gflops, bandwidth_gbs per device name match)");
  cmd->add_option("--title", s->title, "Page title");
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->callback([&o, s] {
    (void)make_catalog(
        o);  // registers the operators --template directories declare: their cost for throughput
    TuningFilter filter;
    filter.device = device_filter(s->device);
    filter.op = opt(s->op);
    filter.dtype = opt(s->dtype);
    filter.layout = opt(s->layout);
    filter.problem_key = opt(s->problem);
    filter.all_results = true;
    const TuningSet set = unwrap(load_tuning_set(o.db, filter));
    ReportOptions options;
    if (!s->title.empty()) options.title = s->title;
    if (!s->ceilings.empty()) options.ceilings = unwrap(load_ceilings(s->ceilings));
    const std::string html = render_report_html(set, options);
    std::ofstream f(s->out, std::ios::binary);
    f << html;
    f.close();
    if (!f) throw ErrorException(Error::bad_input(s->out + ": cannot write the report"));
    std::set<std::pair<std::string, std::string>> problems;
    for (const auto& r : set.results) problems.insert({r.device_key, r.problem_key});
    if (o.json) {
      print_json({{"database", o.db}, {"out", s->out}, {"tuned_problems", problems.size()},
                  {"candidates", set.results.size()}, {"devices", set.devices.size()}, {"bytes", html.size()}});
      return;
    }
    std::cout << "wrote " << s->out << ": " << problems.size() << " tuned problem" << (problems.size() == 1 ? "" : "s") << ", "
              << set.results.size() << " candidates, " << html.size() / 1024 << " KiB\n";
  });
}

}  // namespace kforge::cli
