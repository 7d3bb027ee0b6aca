// `kforge sweep PLAN`: tune every task of a sweep plan (or of one shard of
// it) into the database, resumably; docs/sweep.md.
#include <chrono>

#include "db/database.hpp"
#include "sweep/serial_sweep.hpp"
#include "sweep/sweep_eta.hpp"
#include "sweep/sweep_plan.hpp"
#include "tools/commands.hpp"
#include "tools/mpi_sweep.hpp"
#include "tools/progress_printer.hpp"
#include "tools/runner_flags.hpp"
#include "tools/sweep_command.hpp"

namespace kforge::cli {

namespace {

void print_dry_run(const SweepPlan& plan, SweepShard shard, const std::vector<SweepTask>& tasks, bool json) {
  if (json) {
    nlohmann::json j = {{"plan", plan.file},
                        {"name", plan.name},
                        {"shard", {{"index", shard.index}, {"count", shard.count}}},
                        {"plan_tasks", plan.tasks.size()},
                        {"tasks", nlohmann::json::array()}};
    for (const auto& t : tasks) {
      j["tasks"].push_back({{"index", t.index},
                            {"key", t.key},
                            {"op", t.problem.op},
                            {"entry", t.entry},
                            {"budget", budget_json(t.budget)}});
    }
    print_json(j);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tasks) {
    const auto& b = t.budget;
    rows.push_back({std::to_string(t.index), t.key, b.strategy_to_run(), std::to_string(b.max_evals),
                    fmt(b.time_budget_s), std::to_string(b.seed)});
  }
  std::cout << plan.file << ": shard " << shard.index << "/" << shard.count << ", " << tasks.size() << " of "
            << plan.tasks.size() << " tasks\n";
  print_table({"task", "problem", "strategy", "max_evals", "time_budget_s", "seed"}, rows);
}

void print_result(const CommonOptions& o, const SweepPlan& plan, SweepShard shard, const Device& device,
                  const std::vector<TaskReport>& reports, double total_s) {
  if (o.json) {
    nlohmann::json j = {{"plan", plan.file},
                        {"name", plan.name},
                        {"shard", {{"index", shard.index}, {"count", shard.count}}},
                        {"device", device.info().name},
                        {"device_selector", device.info().selector},
                        {"database", o.db},
                        {"time_s", total_s},
                        {"tasks", nlohmann::json::array()}};
    for (const auto& r : reports) j["tasks"].push_back(report_json(r));
    print_json(j);
  } else {
    print_summary(plan.file,
                  "shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + " on " +
                      device.info().name + " (" + device.info().selector + ")",
                  o.db, reports, total_s);
  }
}

void run_sweep(const CommonOptions& o, const SweepOptions& s) {
  const auto t0 = std::chrono::steady_clock::now();
  TemplateCatalog catalog = make_catalog(o);  // first: it registers declared operators the plan names
  const SweepPlan plan = unwrap(load_sweep_plan(s.plan));
  const SweepShard shard = unwrap(parse_shard(s.shard));
  const std::vector<SweepTask> tasks = shard_tasks(plan, shard);
  if (s.dry_run) {
    print_dry_run(plan, shard, tasks, o.json);
    return;
  }
  auto device = open_device(o);
  SerialSweepOptions options;
  options.runner = s.runner;
  options.profile = s.profile;
  options.has_user_templates = !o.template_dirs.empty();
  options.command_line = command_line();
  ProgressPrinter progress(s.quiet || o.json);
  SerialSweepCallbacks callbacks;
  callbacks.planned = [&](const SweepEta& eta) { progress.set_sweep_eta(&eta); };
  callbacks.task_started = [&](std::size_t position, std::size_t count, const SweepTask& t) {
    progress.set_task(position, count, t.key);
  };
  callbacks.on_event = [&](const TuneEvent& e) { progress(e); };
  callbacks.note = [&](const std::string& line) { progress.note(line); };
  const std::vector<TaskReport> reports =
      unwrap(run_serial_sweep(*device, o.db, plan, tasks, catalog, options, callbacks));
  progress.set_sweep_eta(nullptr);  // the estimate lived in the run
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  print_result(o, plan, shard, *device, reports, total_s);
  throw_if_tasks_failed(reports);
}

}  // namespace

void add_sweep_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("sweep",
                                 "Tune every problem of a sweep plan (JSON, docs/sweep.md) into the "
                                 "database; resumable, splittable with --shard");
  auto s = std::make_shared<SweepOptions>();
  cmd->add_option("plan", s->plan, "Sweep plan file (docs/sweep.md)")->required();
  add_db_flag(*cmd, o);
  add_device_flag(*cmd, o);
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->add_option("--shard", s->shard, "Run share I of N (1-based): the tasks whose plan index mod N is I-1")
      ->capture_default_str();
  cmd->add_flag("--dry-run", s->dry_run, "List the shard's tasks and their budgets; tune nothing");
  cmd->add_flag("--quiet", s->quiet, "No progress output");
  cmd->add_flag(
      "--profile", s->profile,
      "Read hardware counters of each winner and its finalists, as tune --profile (docs/profiling.md)");
  add_runner_flags(*cmd, s->runner);
  cmd->add_flag(
      "--mpi", s->mpi,
      "Run as one rank of an MPI job (mpirun -n N kforge sweep PLAN --mpi): rank 0 hands out the "
      "tasks, each rank tunes into DB.ranks/rank-R.db, rank 0 merges them into --db (docs/sweep.md)");
  cmd->add_option("--mpi-lost-after", s->mpi_lost_after_s,
                  "With --mpi: seconds without a word from a rank (each sends a heartbeat every 2 s) after "
                  "which rank 0 counts it lost and hands its task to another; 0: never")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->callback([&o, s] {
    if (s->mpi && !s->dry_run) {
      run_mpi_sweep(o, *s);
    } else {
      run_sweep(o, *s);
    }
  });
}

}  // namespace kforge::cli
