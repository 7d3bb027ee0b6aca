// What `kforge sweep` shares between its serial and distributed (--mpi)
// forms as a command: its flags, the summary table and the exit status.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep_runner.hpp"
#include "tuner/runner_options.hpp"

namespace kforge::cli {

struct SweepOptions {
  std::string plan;
  std::string shard = "1/1";
  bool dry_run = false;
  bool quiet = false;
  bool mpi = false;      ///< --mpi: one rank of an MPI job (docs/sweep.md, "MPI")
  bool profile = false;  ///< run the counter collectors on each winner and its finalists, as tune --profile
  /// --mpi-lost-after: rank 0 counts a rank lost after this long without a
  /// word from it (it sends a heartbeat every 2 s) and hands its task to
  /// another; 0: never (docs/sweep.md, "MPI").
  double mpi_lost_after_s = 120;
  RunnerOptions runner;  ///< worker process, timeouts, binary cache: as for tune
};

/// Exit status 1 (an ErrorException) when any task failed, after the summary.
void throw_if_tasks_failed(const std::vector<TaskReport>& reports);
/// The summary table, one row per task; `where` says what ran ("shard 1/2 on NAME (SEL)");
/// `by_rank` adds the column of the MPI rank that ran each task.
void print_summary(const std::string& plan_file, const std::string& where, const std::string& db_path,
                   const std::vector<TaskReport>& reports, double total_s, bool by_rank = false);

}  // namespace kforge::cli
