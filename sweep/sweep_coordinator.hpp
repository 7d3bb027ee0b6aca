// Rank 0's side of a distributed sweep, without the communication: it hands
// out the tasks (SweepDispatch), collects what each rank reports, and shows
// the whole plan's progress: tasks done / total, each rank's device and
// current task, failures and the time left; one line per event, and on a
// terminal a live status line under them (docs/sweep.md, "MPI").
// Thread-safe: rank 0's own tasks and the other ranks' requests may arrive
// from two threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_dispatch.hpp"
#include "sweep/sweep_eta.hpp"
#include "sweep/sweep_runner.hpp"

namespace kforge {

/// Who a rank is, as it told rank 0.
struct RankIdentity {
  int rank = 0;
  std::string host;
  std::string device;    ///< DeviceInfo::name
  std::string selector;  ///< "opencl:0"
  std::string device_key;
  std::string backend;
  nlohmann::json to_json() const;
  static RankIdentity from_json(const nlohmann::json& j);
};

/// What one rank did, for the summary and the benchmark's idle times.
struct RankStats {
  int tasks = 0;
  double busy_s = 0;  ///< from hand-out to report, summed over its tasks
  bool lost = false;  ///< counted lost (SweepCoordinator::lose)
};

class SweepCoordinator {
 public:
  /// `tasks`: the plan's (or shard's) tasks; `pending`: the indices of those
  /// to run now, in hand-out order; `quiet`: no progress lines.
  SweepCoordinator(const std::vector<SweepTask>& tasks, std::vector<std::size_t> pending,
                   std::vector<RankIdentity> ranks, bool quiet);

  /// Prefer handing task `index` to `rank` (SweepDispatch::prefer).
  void prefer(std::size_t index, int rank);

  /// A request from `rank`, carrying the report (report_json) of the task it
  /// ran since its last request, if any. Returns the next task's index, or
  /// nullopt when none is left for it.
  std::optional<std::size_t> request(int rank, const std::optional<nlohmann::json>& report);

  /// `rank` is gone (`why`: "nothing heard for 120 s"): its task goes back
  /// to the front of the queue for the next rank that asks, and it gets no
  /// more (SweepDispatch::lose). A later report from it is ignored.
  void lose(int rank, const std::string& why);
  /// Whether a task may still be handed out: one is pending, or one is
  /// running on another rank that may yet be lost. Rank 0 keeps asking
  /// while this holds, so a lost rank's task always finds a taker.
  bool work_may_remain() const;

  /// One line outside the task events (merges, rank failures), kept clear of the live line.
  void note(const std::string& line);
  /// Redraws the live status line (a terminal only); called now and then between events.
  void refresh();

  /// The reports received, by task index among `tasks` (nullopt: not run now).
  std::vector<std::optional<TaskReport>> reports() const;
  std::vector<RankStats> rank_stats() const;
  const std::vector<RankIdentity>& ranks() const { return ranks_; }

 private:
  void record(int rank, const nlohmann::json& report);
  std::string counts() const;
  std::string status_line() const;
  std::optional<double> eta_s() const;
  void print(const std::string& line);
  double elapsed_s(std::chrono::steady_clock::time_point since) const;

  mutable std::mutex mu_;
  const std::vector<SweepTask>& tasks_;
  std::vector<RankIdentity> ranks_;
  SweepDispatch dispatch_;
  SweepEta eta_;
  std::size_t handed_out_ = 0;
  int failed_ = 0;
  std::vector<std::optional<TaskReport>> reports_;
  std::vector<RankStats> stats_;
  std::vector<std::chrono::steady_clock::time_point> started_;  ///< by rank: its current task's hand-out
  bool quiet_;
  bool tty_;
};

}  // namespace kforge
