// `kforge sweep PLAN`: tune every task of a sweep plan (or of one shard of
// it) into the database, resumably; docs/sweep.md.
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "bounded_json.hpp"
#include "builtin_templates.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "operator.hpp"
#include "progress_printer.hpp"
#include "runner_options.hpp"
#include "sweep_eta.hpp"
#include "sweep_plan.hpp"
#include "tune_setup.hpp"
#include "tuner.hpp"
#include "winner_profiling.hpp"

namespace kforge::cli {

namespace {

struct SweepOptions {
  std::string plan;
  std::string shard = "1/1";
  bool dry_run = false;
  bool quiet = false;
  bool profile = false;  ///< run the counter collectors on each winner and its finalists, as tune --profile
  RunnerOptions runner;  ///< worker process, timeouts, binary cache: as for tune
};

/// What became of one task.
struct TaskReport {
  const SweepTask* task = nullptr;
  enum class State { kRan, kSkipped, kError } state = State::kRan;
  std::string error;
  int evaluated = 0;      ///< candidates considered (stored ones included)
  int evaluated_now = 0;  ///< evaluated by this run
  std::map<std::string, int> failed;  ///< by status
  std::optional<CandidateOutcome> winner;
  std::int64_t sweep_id = 0;  ///< the run's sweep row, or the earlier one that finished the task
  double time_s = 0;
  std::string retiming_note;  ///< TuneSummary::retiming.note: the winner stands unsettled
  /// Finalists the re-timing cannot tell from the winner (within_noise_of_winner).
  std::vector<CandidateOutcome> within_noise;
};

std::string_view state_name(TaskReport::State s) {
  switch (s) {
    case TaskReport::State::kRan: return "ran";
    case TaskReport::State::kSkipped: return "skipped";
    case TaskReport::State::kError: return "error";
  }
  return "error";
}

MeasurementProtocol protocol_for(const SweepBudget& b) {
  MeasurementProtocol p;
  p.min_reps = b.min_reps;
  p.max_reps = std::max(b.max_reps, b.min_reps);
  return p;
}

/// The templates a task tunes on `backend`: those selected as `kforge tune`
/// would, that take the task's dtype and layout. A task none can run is bad
/// input naming the plan field at fault.
std::vector<const TemplateSource*> task_templates(const SweepPlan& plan, const SweepTask& t,
                                                  const TemplateCatalog& catalog, const std::string& backend,
                                                  bool has_user_templates) {
  const auto all = select_templates(catalog, t.problem.op, backend, "", has_user_templates);
  std::vector<const TemplateSource*> out;
  bool dtype_ok = false;
  for (const auto* tpl : all) {
    dtype_ok = dtype_ok || tpl->manifest.supports(t.problem.dtype);
    if (tpl->manifest.supports(t.problem.dtype) && tpl->manifest.supports(t.problem.layout)) out.push_back(tpl);
  }
  if (out.empty()) {
    const std::string dtype(dtype_name(t.problem.dtype));
    if (all.empty()) {
      throw ErrorException(Error::bad_input(plan.file + ": " + t.entry + ".op: no " + t.problem.op +
                                            " template targets " + backend));
    }
    if (!dtype_ok) {
      throw ErrorException(Error::bad_input(plan.file + ": " + t.dtype_path + ": no " + t.problem.op +
                                            " template for " + backend + " takes dtype \"" + dtype + "\""));
    }
    throw ErrorException(Error::bad_input(plan.file + ": " + t.layout_path + ": no " + t.problem.op +
                                          " template for " + backend + " takes layout \"" + t.problem.layout.name() +
                                          "\" with dtype \"" + dtype + "\""));
  }
  return out;
}

/// The id of a finished sweep that tuned `t` on this device with the same
/// budget and protocol while every template in `templates` was at its current
/// version; 0 when there is none (the task must run, or resume).
std::int64_t finished_by(const std::vector<SweepRecord>& sweeps, const std::set<std::pair<std::string, std::string>>& versions,
                         const SweepTask& t, const std::string& device_key,
                         const std::vector<const TemplateSource*>& templates, const std::string& backend,
                         const MeasurementProtocol& protocol) {
  const std::string_view prelude = prelude_text(backend);
  for (const auto* tpl : templates) {
    if (!versions.count({tpl->manifest.name, tpl->hash(prelude)})) return 0;
  }
  const nlohmann::json protocol_json = protocol.to_json();
  for (auto it = sweeps.rbegin(); it != sweeps.rend(); ++it) {
    if (it->finished_at.empty()) continue;
    const auto settings_parsed = parse_json_bounded(it->settings_json, "sweeps.settings_json");
    const auto device_parsed = parse_json_bounded(it->device_json, "sweeps.device_json");
    if (!settings_parsed.ok() || !device_parsed.ok()) continue;  // a row this version cannot read finished nothing
    const nlohmann::json& settings = settings_parsed.value();
    const nlohmann::json& device = device_parsed.value();
    if (!settings.is_object() || !device.is_object() || settings.contains("only_config")) continue;
    if (device.value("hardware_key", "") != device_key) continue;
    const auto& b = t.budget;
    if (settings.value("problem", "") == t.key && settings.value("strategy", "") == b.strategy &&
        settings.value("max_evals", -1) == b.max_evals && settings.value("no_improvement", -1) == b.no_improvement &&
        settings.value("time_budget_s", -1.0) == b.time_budget_s &&
        settings.value("seed", std::uint64_t{0}) == b.seed && settings.value("warm_start", 0) == b.warm_start &&
        settings.value("protocol", nlohmann::json()) == protocol_json) {
      return it->id;
    }
  }
  return 0;
}

/// The report of a task finished earlier, from what the database holds for
/// its problem under the current template versions.
TaskReport stored_report(Database& db, const SweepTask& t, const std::string& device_key,
                         const std::vector<const TemplateSource*>& templates, const std::string& backend) {
  TaskReport r;
  r.task = &t;
  r.state = TaskReport::State::kSkipped;
  std::set<std::pair<std::string, std::string>> current;
  for (const auto* tpl : templates) current.insert({tpl->manifest.name, tpl->hash(prelude_text(backend))});
  for (const auto& rec : unwrap(db.results({device_key, t.key, std::nullopt}))) {
    if (!current.count({rec.template_name, rec.template_hash})) continue;
    ++r.evaluated;
    if (rec.status != "ok") {
      ++r.failed[rec.status];
    } else if (!r.winner || rec.median_ms < r.winner->timing.median_ms) {
      r.winner = outcome_from_record(rec);
    }
  }
  return r;
}

std::string failures_text(const std::map<std::string, int>& failed) {
  std::string s;
  for (const auto& [status, n] : failed) s += (s.empty() ? "" : " ") + status + "=" + std::to_string(n);
  return s.empty() ? "none" : s;
}

nlohmann::json budget_json(const SweepBudget& b) {
  return {{"strategy", b.strategy}, {"max_evals", b.max_evals}, {"time_budget_s", b.time_budget_s},
          {"no_improvement", b.no_improvement}, {"seed", b.seed}, {"min_reps", b.min_reps},
          {"max_reps", b.max_reps}, {"warm_start", b.warm_start}};
}

void print_dry_run(const SweepPlan& plan, SweepShard shard, const std::vector<SweepTask>& tasks, bool json) {
  if (json) {
    nlohmann::json j = {{"plan", plan.file}, {"name", plan.name},
                        {"shard", {{"index", shard.index}, {"count", shard.count}}},
                        {"plan_tasks", plan.tasks.size()}, {"tasks", nlohmann::json::array()}};
    for (const auto& t : tasks) {
      j["tasks"].push_back({{"index", t.index}, {"key", t.key}, {"op", t.problem.op}, {"entry", t.entry},
                            {"budget", budget_json(t.budget)}});
    }
    print_json(j);
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& t : tasks) {
    const auto& b = t.budget;
    rows.push_back({std::to_string(t.index), t.key, b.strategy, std::to_string(b.max_evals), fmt(b.time_budget_s),
                    std::to_string(b.seed)});
  }
  std::cout << plan.file << ": shard " << shard.index << "/" << shard.count << ", " << tasks.size() << " of "
            << plan.tasks.size() << " tasks\n";
  print_table({"task", "problem", "strategy", "max_evals", "time_budget_s", "seed"}, rows);
}

nlohmann::json report_json(const TaskReport& r) {
  nlohmann::json j = {{"index", r.task->index}, {"key", r.task->key}, {"state", state_name(r.state)},
                      {"evaluated", r.evaluated}, {"evaluated_now", r.evaluated_now}, {"failed", r.failed},
                      {"sweep_id", r.sweep_id}, {"time_s", r.time_s}, {"winner", nullptr}};
  if (r.winner) {
    j["winner"] = {{"template", r.winner->template_name}, {"config", r.winner->config},
                   {"median_ms", r.winner->timing.median_ms}};
  }
  if (r.state == TaskReport::State::kError) j["error"] = r.error;
  if (!r.retiming_note.empty()) j["retiming_note"] = r.retiming_note;
  j["within_noise_of_winner"] = nlohmann::json::array();
  for (const auto& o : r.within_noise) {
    j["within_noise_of_winner"].push_back(
        {{"template", o.template_name}, {"config", o.config}, {"median_ms", o.timing.median_ms}});
  }
  return j;
}

void print_summary(const SweepPlan& plan, SweepShard shard, const Device& device, const std::string& db_path,
                   const std::vector<TaskReport>& reports, double total_s) {
  std::vector<std::vector<std::string>> rows;
  int ran = 0, skipped = 0, errors = 0;
  for (const auto& r : reports) {
    ran += r.state == TaskReport::State::kRan;
    skipped += r.state == TaskReport::State::kSkipped;
    errors += r.state == TaskReport::State::kError;
    std::string evaluated = std::to_string(r.evaluated);
    if (r.state == TaskReport::State::kRan) evaluated += " (" + std::to_string(r.evaluated_now) + " now)";
    rows.push_back({std::to_string(r.task->index), r.task->key, std::string(state_name(r.state)),
                    r.winner ? r.winner->template_name + " " + r.winner->config
                             : (r.state == TaskReport::State::kError ? r.error.substr(0, 100) : "-"),
                    r.winner ? fmt(r.winner->timing.median_ms) : "-", evaluated,
                    r.state == TaskReport::State::kError ? "-" : failures_text(r.failed)});
  }
  std::cout << "\n" << plan.file << " shard " << shard.index << "/" << shard.count << " on " << device.info().name
            << " (" << device.info().selector << "): " << reports.size() << " tasks, " << ran << " ran, " << skipped
            << " skipped (finished earlier), " << errors << " failed, " << fmt(total_s, 3) << " s\n";
  print_table({"task", "problem", "state", "winner", "median ms", "evaluated", "failed by status"}, rows);
  std::cout << "database: " << db_path << "\n";
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
  const std::string backend = device->info().backend;
  const std::string device_key = device->info().hardware_key();
  // Every task must be runnable before the first one starts.
  std::vector<std::vector<const TemplateSource*>> templates;
  for (const auto& t : tasks) templates.push_back(task_templates(plan, t, catalog, backend, !o.template_dirs.empty()));
  auto db = unwrap(Database::open(o.db, Database::Mode::kReadWrite));
  const std::vector<SweepRecord> earlier = unwrap(db->sweeps());
  std::set<std::pair<std::string, std::string>> versions;
  for (const auto& rec : unwrap(db->templates())) versions.insert({rec.name, rec.hash});

  // Tasks finished by earlier sweeps are known before the first starts, so
  // the estimate of the time left counts only the tasks this run tunes.
  std::vector<std::int64_t> finished(tasks.size());  // 0: not finished
  std::vector<double> budgets_s;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    finished[i] = finished_by(earlier, versions, tasks[i], device_key, templates[i], backend,
                              protocol_for(tasks[i].budget));
    if (!finished[i]) budgets_s.push_back(tasks[i].budget.time_budget_s);
  }
  SweepEta eta(std::move(budgets_s));
  ProgressPrinter progress(s.quiet || o.json);
  progress.set_sweep_eta(&eta);
  std::vector<TaskReport> reports;
  std::size_t tuned = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const SweepTask& t = tasks[i];
    progress.set_task(i + 1, tasks.size(), t.key);
    const MeasurementProtocol protocol = protocol_for(t.budget);
    if (auto id = finished[i]) {
      TaskReport r = stored_report(*db, t, device_key, templates[i], backend);
      r.sweep_id = id;
      progress.note(t.key + ": finished by sweep " + std::to_string(id) + ", skipped");
      reports.push_back(std::move(r));
      continue;
    }
    TuneRequest req;
    req.problem = t.problem;
    req.templates = templates[i];
    req.strategy = t.budget.strategy;
    req.max_evals = t.budget.max_evals;
    req.time_budget_s = t.budget.time_budget_s;
    req.no_improvement = t.budget.no_improvement;
    req.seed = t.budget.seed;
    req.warm_start = t.budget.warm_start;
    req.protocol = protocol;
    req.command_line = command_line();
    apply_runner_options(s.runner, req);
    Tuner tuner(*device, *db, *find_operator(t.problem.op));
    eta.start(tuned++);
    const auto task_t0 = std::chrono::steady_clock::now();
    auto summary = tuner.run(req, [&](const TuneEvent& e) { progress(e); });
    eta.finish(std::chrono::duration<double>(std::chrono::steady_clock::now() - task_t0).count());
    TaskReport r;
    r.task = &t;
    if (!summary.ok()) {
      r.state = TaskReport::State::kError;
      r.error = summary.error().message;
      progress.note(t.key + ": error: " + r.error);
    } else {
      r.evaluated = summary->counts.evaluated + summary->counts.reused;
      r.evaluated_now = summary->counts.evaluated;
      for (const auto& oc : summary->outcomes) {
        if (oc.status != CandidateStatus::kOk) ++r.failed[std::string(status_name(oc.status))];
      }
      r.winner = summary->winner;
      r.sweep_id = summary->sweep_id;
      // Counters rows for the winner and finalists (docs/profiling.md); a
      // collector's failure is a row of its own, a database error a note.
      auto profiled = profile_winners(*db, *device, *find_operator(t.problem.op), req, *summary, s.profile);
      if (!profiled.ok()) progress.note(t.key + ": counters not stored: " + profiled.error().message);
      r.time_s = summary->times.total_s;
      r.retiming_note = summary->retiming.note;
      if (!r.retiming_note.empty()) progress.note(t.key + ": " + r.retiming_note);
      for (const FinalistTiming* f : within_noise_of_winner(*summary)) {
        CandidateOutcome tied = f->outcome;
        tied.timing = f->interleaved;  // the re-timing's median, as the winner's
        r.within_noise.push_back(std::move(tied));
        progress.note(t.key + ": within noise of the winner: " + f->outcome.template_name + " " + f->outcome.config +
                      " " + fmt(f->interleaved.median_ms) + " ms");
      }
    }
    reports.push_back(std::move(r));
  }
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int errors = 0;
  for (const auto& r : reports) errors += r.state == TaskReport::State::kError;
  if (o.json) {
    nlohmann::json j = {{"plan", plan.file}, {"name", plan.name},
                        {"shard", {{"index", shard.index}, {"count", shard.count}}},
                        {"device", device->info().name}, {"device_selector", device->info().selector},
                        {"database", o.db}, {"time_s", total_s}, {"tasks", nlohmann::json::array()}};
    for (const auto& r : reports) j["tasks"].push_back(report_json(r));
    print_json(j);
  } else {
    print_summary(plan, shard, *device, o.db, reports, total_s);
  }
  if (errors > 0) {
    throw ErrorException(Error::internal(std::to_string(errors) + " of " + std::to_string(reports.size()) +
                                         " tasks failed (see the summary); rerun to retry them"));
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("sweep", "Tune every problem of a sweep plan (JSON, docs/sweep.md) into the "
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
  cmd->callback([&o, s] { run_sweep(o, *s); });
}

}  // namespace kforge::cli
