// Dynamic hand-out of a sweep's tasks to the ranks of a distributed sweep:
// a rank that finishes asks for the next task, so a rank given a cheap task
// is never idle while costly ones wait (docs/sweep.md, "MPI"). Pure
// bookkeeping, no communication: the coordinator answers each request with it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace kforge {

class SweepDispatch {
 public:
  /// `pending`: the tasks to run (indices into the caller's task list), in
  /// the order to hand them out; `ranks`: how many ranks ask.
  SweepDispatch(std::vector<std::size_t> pending, int ranks);

  /// Hand `task` to `rank` before any other rank: the rank holds results of
  /// it from an earlier, interrupted run that its tuner will reuse. Ignored
  /// for a rank this job does not have or a task not pending.
  void prefer(std::size_t task, int rank);

  /// The next task for `rank`, now running there: a task that prefers it,
  /// else the first that prefers no rank. nullopt when none is left for
  /// it: a task another rank prefers is left to that rank, which is part
  /// of the job and asks in turn, so its stored results are reused.
  std::optional<std::size_t> next(int rank);
  /// The task running on `rank` ended (ran or failed).
  void finish(int rank);
  /// `rank` is gone (it died, or fell silent): it gets nothing more, the
  /// task it was running goes back to the front of the queue, and the tasks
  /// that preferred it prefer no rank. Returns that task, if any.
  std::optional<std::size_t> lose(int rank);
  bool lost(int rank) const;

  std::optional<std::size_t> running(int rank) const;
  std::size_t pending() const { return pending_.size(); }
  std::size_t running_count() const;
  std::size_t finished() const { return finished_; }
  std::size_t total() const { return total_; }

 private:
  std::optional<std::size_t> take(std::size_t position, int rank);

  struct Pending {
    std::size_t task;
    int preferred_rank;  ///< -1: none
  };
  std::vector<Pending> pending_;
  std::vector<std::optional<std::size_t>> running_;  ///< by rank
  std::vector<bool> lost_;                            ///< by rank
  std::size_t finished_ = 0;
  std::size_t total_ = 0;
};

}  // namespace kforge
