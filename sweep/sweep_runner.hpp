// What a sweep does per task, shared by `kforge sweep` (serial and --mpi)
// and the Python package: the templates a task tunes, whether an earlier
// sweep finished it, running it with its budget, and the report of what
// became of it (docs/sweep.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "sweep/sweep_plan.hpp"
#include "tuner/runner_options.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

/// What became of one task.
struct TaskReport {
  const SweepTask* task = nullptr;
  enum class State { kRan, kSkipped, kError } state = State::kRan;
  std::string error;
  int evaluated = 0;                  ///< candidates considered (stored ones included)
  int evaluated_now = 0;              ///< evaluated by this run
  std::map<std::string, int> failed;  ///< by status
  std::optional<CandidateOutcome> winner;
  std::int64_t sweep_id = 0;  ///< the run's sweep row, or the earlier one that finished the task
  double time_s = 0;
  std::string retiming_note;  ///< TuneSummary::retiming.note: the winner stands unsettled
  /// Finalists the re-timing cannot tell from the winner (within_noise_of_winner).
  std::vector<CandidateOutcome> within_noise;
  int rank = -1;           ///< the MPI rank that ran it; -1: not an MPI sweep
  std::string device_key;  ///< the device it ran on (DeviceInfo::hardware_key), for an MPI sweep
};

std::string_view state_name(TaskReport::State s);
MeasurementProtocol protocol_for(const SweepBudget& b);

/// The templates a task tunes on `backend`: those selected as `kforge tune`
/// would, that take the task's dtype and layout. A task none can run is bad
/// input naming the plan field at fault.
Result<std::vector<const TemplateSource*>> task_templates(const SweepPlan& plan, const SweepTask& t,
                                                  const TemplateCatalog& catalog, const std::string& backend,
                                                  bool has_user_templates);

/// What a database knows of earlier sweeps, read once: enough to tell which
/// tasks an earlier sweep finished.
class SweepHistory {
 public:
  static Result<SweepHistory> read(Database& db);
  /// The id of a finished sweep that tuned `t` on the device `device_key`
  /// with the same budget and protocol while every template in `templates`
  /// was at its current version; 0 when there is none (the task must run,
  /// or resume).
  std::int64_t finished_by(const SweepTask& t, const std::string& device_key,
                           const std::vector<const TemplateSource*>& templates,
                           const std::string& backend) const;

 private:
  SweepHistory() = default;
  std::vector<SweepRecord> sweeps_;
  std::set<std::pair<std::string, std::string>> versions_;  ///< template name, hash
};

/// The report of a task finished earlier, from what the database holds for
/// its problem under the current template versions.
Result<TaskReport> stored_report(Database& db, const SweepTask& t, const std::string& device_key,
                         const std::vector<const TemplateSource*>& templates, const std::string& backend);

/// Tunes one task with its budget on `device` into `db`, as `kforge tune`
/// would; a task that cannot run is a report with state kError, not a throw.
/// `on_event` sees the tuner's progress; `note` gets one line per remark.
/// The winner and finalists get counters rows (docs/profiling.md); `profile`
/// runs the collectors, as tune --profile. `command_line` is recorded with
/// the sweep row.
TaskReport run_task(Device& device, Database& db, const SweepTask& t,
                    const std::vector<const TemplateSource*>& templates, const RunnerOptions& runner,
                    const std::function<void(const TuneEvent&)>& on_event,
                    const std::function<void(const std::string&)>& note, bool profile,
                    const std::string& command_line);

std::string failures_text(const std::map<std::string, int>& failed);
nlohmann::json budget_json(const SweepBudget& b);
/// One task of `--json`'s `tasks` (docs/sweep.md).
nlohmann::json report_json(const TaskReport& r);
/// The report of task `t` from report_json's object (sent between ranks).
TaskReport report_from_json(const nlohmann::json& j, const SweepTask& t);
}  // namespace kforge
