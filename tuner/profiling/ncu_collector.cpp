// collect_ncu: ncu --csv --page raw around one profile launch.
#include "tuner/profiling/ncu_collector.hpp"

#include <fstream>
#include <sstream>

#include "runtime/profiling/ncu_csv.hpp"
#include "tuner/profiling/child_command.hpp"

namespace kforge {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The last non-empty line of `text`, for a failure's message.
std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

const std::vector<std::string>& ncu_metrics() {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> m = {
        "gpu__time_duration.sum",
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "lts__t_sector_hit_rate.pct",
        "l1tex__t_sector_hit_rate.pct",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
        "launch__registers_per_thread",
    };
    // ncu takes no wildcard here: every stall reason is named.
    for (const char* reason : {"barrier", "branch_resolving", "dispatch_stall", "lg_throttle",
                               "long_scoreboard", "math_pipe_throttle", "mio_throttle", "no_instruction",
                               "not_selected", "short_scoreboard", "wait"}) {
      m.push_back(std::string("smsp__average_warp_latency_issue_stalled_") + reason + ".ratio");
    }
    return m;
  }();
  return metrics;
}

std::vector<std::string> ncu_command(const NcuRun& run) {
  std::string metrics;
  for (const auto& m : ncu_metrics()) metrics += (metrics.empty() ? "" : ",") + m;
  std::vector<std::string> argv = {
      run.ncu,      "--csv",     "--page",         "raw", "--print-units",      "base",
      "--metrics",  metrics,     "--launch-count", "1",   "--target-processes", "all",
      "--log-file", run.log_file};
  if (!run.kernel_name.empty()) {
    argv.push_back("--kernel-name");
    argv.push_back(run.kernel_name);
  }
  argv.insert(argv.end(), run.launcher.begin(), run.launcher.end());
  return argv;
}

std::string ncu_version(const std::string& ncu, const std::string& scratch_file) {
  auto ran = run_command({ncu, "--version"}, scratch_file, 30);
  const std::string out = read_all(scratch_file);
  const std::size_t at = out.find("Version ");
  if (!ran.ok() || at == std::string::npos) return "ncu (version unknown)";
  std::string version = out.substr(at + 8);
  version = version.substr(0, version.find_first_of(" \n"));
  return "ncu " + version;
}

CounterCollection ncu_collection_from_csv(const std::string& csv, const std::string& source,
                                          const std::string& tool) {
  auto rows = parse_ncu_raw_csv(csv, source);
  if (!rows.ok()) return CounterCollection::none("ncu", rows.error().message);
  if (rows->empty()) return CounterCollection::none("ncu", source + ": ncu profiled no launch");
  CounterCollection c{"ncu", tool, {}, std::move(rows->front().readings)};
  if (c.readings.empty())
    return CounterCollection::none("ncu", source + ": the profiled launch has no metric value");
  return c;
}

CounterCollection collect_ncu(const NcuRun& run) {
  const std::string tool = ncu_version(run.ncu, run.output_file + ".version");
  auto ran = run_command(ncu_command(run), run.output_file, run.timeout_s);
  if (!ran.ok()) return CounterCollection::none("ncu", ran.error().message);
  const std::string csv = read_all(run.log_file);
  if (!ran->exited || ran->exit_code != 0) {
    const std::string said = last_line(csv.empty() ? read_all(run.output_file) : csv);
    return CounterCollection::none("ncu", "ncu " + ran->how + (said.empty() ? "" : ": " + said));
  }
  return ncu_collection_from_csv(csv, run.log_file, tool);
}

}  // namespace kforge
