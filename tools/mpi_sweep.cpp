// `kforge sweep PLAN --mpi`: the CLI of one rank of a distributed sweep
// (sweep/mpi/distributed_sweep.hpp runs it); rank 0 prints the summary and
// each rank's share (docs/sweep.md, "MPI").
#include "tools/mpi_sweep.hpp"

#include <algorithm>
#include <chrono>

#include "sweep/mpi/distributed_sweep.hpp"

namespace kforge::cli {

namespace {

nlohmann::json ranks_json(const std::vector<RankIdentity>& ranks, const DistributedSweepOutcome& out) {
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto row = ranks[r].to_json();
    row["tasks"] = out.stats[r].tasks;
    row["busy_s"] = out.stats[r].busy_s;
    row["idle_s"] = std::max(0.0, out.window_s - out.stats[r].busy_s);
    row["lost"] = out.stats[r].lost;
    j.push_back(row);
  }
  return j;
}

void print_ranks(const std::vector<RankIdentity>& ranks, const DistributedSweepOutcome& out) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    rows.push_back({std::to_string(r), ranks[r].host, ranks[r].device, ranks[r].selector,
                    std::to_string(out.stats[r].tasks), fmt(out.stats[r].busy_s, 3),
                    fmt(std::max(0.0, out.window_s - out.stats[r].busy_s), 3), out.stats[r].lost ? "lost" : ""});
  }
  print_table({"rank", "host", "device", "selector", "tasks", "busy s", "idle s", "state"}, rows);
}

void print_outcome(const CommonOptions& o, const DistributedSweepOutcome& out, double total_s) {
  const auto& plan = out.plan;
  const auto& ranks = out.ranks;
  if (o.json) {
    nlohmann::json j = {
        {"plan", plan.file},
        {"name", plan.name},
        {"shard", {{"index", out.shard.index}, {"count", out.shard.count}}},
        {"mpi", {{"ranks", ranks_json(ranks, out)}, {"window_s", out.window_s}, {"merged", out.merges}}},
        {"database", o.db},
        {"time_s", total_s},
        {"tasks", nlohmann::json::array()}};
    for (const auto& r : out.reports) j["tasks"].push_back(report_json(r));
    print_json(j);
    return;
  }
  std::string where = "shard " + std::to_string(out.shard.index) + "/" + std::to_string(out.shard.count) +
                      " on " + std::to_string(ranks.size()) + " MPI ranks";
  print_summary(plan.file, where, o.db, out.reports, total_s, true);
  print_ranks(ranks, out);
}

}  // namespace

void run_mpi_sweep(const CommonOptions& o, const SweepOptions& s) {
  MpiSession mpi;
  const auto t0 = std::chrono::steady_clock::now();
  DistributedSweepOptions d;
  d.plan = s.plan;
  d.shard = s.shard;
  d.db = o.db;
  d.device = o.device;
  d.template_dirs = o.template_dirs;
  d.runner = s.runner;
  d.profile = s.profile;
  d.quiet = s.quiet || o.json;
  d.lost_after_s = s.mpi_lost_after_s;
  d.command_line = command_line();
  const auto out = run_distributed_sweep(mpi, d);
  if (!out) return;  // a rank other than 0
  print_outcome(o, *out, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  throw_if_tasks_failed(out->reports);
}

}  // namespace kforge::cli
