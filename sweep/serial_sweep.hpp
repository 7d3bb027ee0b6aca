// A serial sweep: the tasks of one shard of a plan tuned in order on one
// device into one database, resumably (docs/sweep.md). `kforge sweep` and
// kforge.sweep() in Python run it; --mpi hands the same tasks to ranks.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/database.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "sweep/sweep_eta.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/sweep_runner.hpp"
#include "tuner/runner_options.hpp"

namespace kforge {

struct SerialSweepOptions {
  RunnerOptions runner;             ///< worker process, timeouts, binary cache: as for a tune
  bool profile = false;             ///< run the counter collectors on each winner and its finalists
  bool has_user_templates = false;  ///< the catalog holds user template directories
  std::string command_line;         ///< recorded with each task's sweep row
};

/// What a serial sweep tells its caller while it runs.
struct SerialSweepCallbacks {
  /// Once, before the first task: the estimate of the time left, which
  /// counts only the tasks this run tunes; valid until the run returns.
  std::function<void(const SweepEta&)> planned;
  /// Before each task, with its 1-based position among `tasks`.
  std::function<void(std::size_t position, std::size_t count, const SweepTask&)> task_started;
  std::function<void(const TuneEvent&)> on_event;
  std::function<void(const std::string&)> note;  ///< one line per remark
};

/// Tunes `tasks` (of `plan`) on `device` into the database at `db_path`
/// (created if needed): every task must have templates that can run it
/// before the database is opened (bad input naming the plan's field
/// otherwise, nothing written); a task an earlier sweep finished is
/// reported from the database and skipped. A task that fails is a report in
/// state kError, and the run goes on.
Result<std::vector<TaskReport>> run_serial_sweep(Device& device, const std::string& db_path,
                                                 const SweepPlan& plan, const std::vector<SweepTask>& tasks,
                                                 const TemplateCatalog& catalog, const SerialSweepOptions& options,
                                                 const SerialSweepCallbacks& callbacks);

}  // namespace kforge
