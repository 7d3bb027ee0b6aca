// One rank's part of a distributed sweep (docs/sweep.md, "MPI"): every rank
// opens its own device and database (DB.ranks/rank-R.db); rank 0 merges
// what an earlier run left, works out the unfinished tasks, hands them out
// one at a time as ranks ask (a thread of its own serves the other ranks
// while it tunes too), and merges every rank's database into the plan's at
// the end. Built only with KFORGE_WITH_MPI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/mpi/mpi_session.hpp"
#include "sweep/sweep_coordinator.hpp"
#include "sweep/sweep_plan.hpp"
#include "sweep/sweep_runner.hpp"
#include "tuner/runner_options.hpp"

namespace kforge {

struct DistributedSweepOptions {
  std::string plan;           ///< the plan's file
  std::string shard = "1/1";  ///< "I/N": the part of the plan this job runs
  std::string db;             ///< the plan's database
  std::string device = "auto";  ///< "auto": the node's GPUs shared out by local rank
  std::vector<std::string> template_dirs;  ///< user templates (tuned alone where they implement an operator)
  RunnerOptions runner;       ///< worker process, timeouts, binary cache: as for tune
  bool profile = false;       ///< counters of each winner and its finalists
  bool quiet = false;         ///< no progress lines from rank 0
  /// Rank 0 counts a rank lost after this long without a word from it (a
  /// heartbeat comes every 2 s) and hands its task to another; 0: never.
  double lost_after_s = 120;
  std::string command_line;   ///< recorded with each sweep
};

/// What rank 0 saw.
struct DistributedSweepOutcome {
  SweepPlan plan;
  SweepShard shard;
  std::vector<SweepTask> tasks;  ///< the shard's tasks; `reports` point into it
  std::vector<TaskReport> reports;  ///< one per task: run now, finished earlier, or an error
  std::vector<RankIdentity> ranks;
  std::vector<RankStats> stats;  ///< by rank
  std::vector<std::string> merges;  ///< one line per rank database merged (merge_line)
  double window_s = 0;  ///< from the first hand-out to the last rank done
};

/// Runs this rank's part of the sweep `options` describe: the outcome on
/// rank 0, nullopt on the others. An error on any rank ends every rank
/// (MpiSession::on_every_rank): it is thrown as an ErrorException on the
/// rank that had it and as an ExitStatus on the others.
std::optional<DistributedSweepOutcome> run_distributed_sweep(MpiSession& mpi,
                                                             const DistributedSweepOptions& options);

}  // namespace kforge
