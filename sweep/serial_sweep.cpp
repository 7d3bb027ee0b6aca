// The serial sweep's loop over its tasks.
#include "sweep/serial_sweep.hpp"

#include <chrono>

namespace kforge {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<std::vector<TaskReport>> run_serial_sweep(Device& device, const std::string& db_path,
                                                 const SweepPlan& plan, const std::vector<SweepTask>& tasks,
                                                 const TemplateCatalog& catalog, const SerialSweepOptions& options,
                                                 const SerialSweepCallbacks& callbacks) {
  const std::string backend = device.info().backend;
  const std::string device_key = device.info().hardware_key();
  // Every task must be runnable before the first one starts.
  std::vector<std::vector<const TemplateSource*>> templates;
  for (const auto& t : tasks) {
    KF_TRY_ASSIGN(chosen, task_templates(plan, t, catalog, backend, options.has_user_templates));
    templates.push_back(std::move(chosen));
  }
  KF_TRY_ASSIGN(opened, Database::open(db_path, Database::Mode::kReadWrite));
  Database& db = *opened;
  KF_TRY_ASSIGN(history, SweepHistory::read(db));
  // Tasks finished by earlier sweeps are known before the first starts, so
  // the estimate of the time left counts only the tasks this run tunes.
  std::vector<std::int64_t> finished(tasks.size());  // 0: not finished
  std::vector<double> budgets_s;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    finished[i] = history.finished_by(tasks[i], device_key, templates[i], backend);
    if (!finished[i]) budgets_s.push_back(tasks[i].budget.time_budget_s);
  }
  SweepEta eta(std::move(budgets_s));
  if (callbacks.planned) callbacks.planned(eta);
  const auto note = [&](const std::string& line) {
    if (callbacks.note) callbacks.note(line);
  };
  const auto on_event = [&](const TuneEvent& e) {
    if (callbacks.on_event) callbacks.on_event(e);
  };
  std::vector<TaskReport> reports;
  std::size_t tuned = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const SweepTask& t = tasks[i];
    if (callbacks.task_started) callbacks.task_started(i + 1, tasks.size(), t);
    if (const std::int64_t id = finished[i]) {
      KF_TRY_ASSIGN(stored, stored_report(db, t, device_key, templates[i], backend));
      stored.sweep_id = id;
      note(t.key + ": finished by sweep " + std::to_string(id) + ", skipped");
      reports.push_back(std::move(stored));
      continue;
    }
    eta.start(tuned++);
    const auto task_t0 = std::chrono::steady_clock::now();
    reports.push_back(run_task(device, db, t, templates[i], options.runner, on_event, note, options.profile,
                               options.command_line));
    eta.finish(seconds_since(task_t0));
  }
  return reports;
}

}  // namespace kforge
