// The time a sweep has left: the current task's own estimate plus an
// estimate for each task still to come, from the tasks this run has
// finished and, where a task has a time budget, never above it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace kforge {

class SweepEta {
 public:
  /// `budgets_s`: for each task this run will tune (tasks already finished
  /// by earlier sweeps left out), in order, its time budget in seconds
  /// (0: none).
  explicit SweepEta(std::vector<double> budgets_s);

  /// Task `index` (0-based among those given) starts.
  void start(std::size_t index);
  /// The task that started last ended after `seconds`.
  void finish(double seconds);

  /// Seconds left for the whole sweep while the current task has run
  /// `elapsed_s` and estimates `task_left_s` more. A task to come is
  /// estimated as the mean of the tasks finished so far, or, before any has
  /// finished, as the current task's projected total (elapsed + left); either
  /// is capped by that task's budget. nullopt before any task has started.
  std::optional<double> remaining_s(double elapsed_s, double task_left_s) const;

  /// At the current task's start: seconds left for it and every task after
  /// it, each estimated as the mean of the finished tasks (capped by its
  /// budget); nullopt until a task has finished.
  std::optional<double> remaining_at_start_s() const;

  /// Several ranks tune at once (a distributed sweep, where start(k) says
  /// k tasks have been handed out): the tasks not handed out, each as
  /// remaining_at_start_s estimates it, plus what each running task has
  /// left of the finished tasks' mean after `running_elapsed_s`, shared
  /// among `ranks`. nullopt until a task has finished.
  std::optional<double> remaining_parallel_s(const std::vector<double>& running_elapsed_s,
                                             std::size_t ranks) const;

  /// Tasks not yet started.
  std::size_t tasks_after_current() const;

 private:
  std::vector<double> budgets_s_;
  std::optional<std::size_t> current_;
  double finished_s_ = 0;
  std::size_t finished_ = 0;
};

}  // namespace kforge
