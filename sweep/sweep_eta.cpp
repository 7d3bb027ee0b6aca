// Whole-sweep time estimate.
#include "sweep/sweep_eta.hpp"

#include <algorithm>

namespace kforge {

SweepEta::SweepEta(std::vector<double> budgets_s) : budgets_s_(std::move(budgets_s)) {}

void SweepEta::start(std::size_t index) { current_ = index; }

void SweepEta::finish(double seconds) {
  finished_s_ += std::max(0.0, seconds);
  ++finished_;
}

std::size_t SweepEta::tasks_after_current() const {
  if (!current_) return budgets_s_.size();
  return *current_ + 1 < budgets_s_.size() ? budgets_s_.size() - *current_ - 1 : 0;
}

std::optional<double> SweepEta::remaining_s(double elapsed_s, double task_left_s) const {
  if (!current_) return std::nullopt;
  task_left_s = std::max(0.0, task_left_s);
  const double per_task = finished_ > 0 ? finished_s_ / static_cast<double>(finished_)
                                        : std::max(0.0, elapsed_s) + task_left_s;
  double total = task_left_s;
  for (std::size_t i = *current_ + 1; i < budgets_s_.size(); ++i) {
    total += budgets_s_[i] > 0 ? std::min(per_task, budgets_s_[i]) : per_task;
  }
  return total;
}

std::optional<double> SweepEta::remaining_at_start_s() const {
  if (!current_ || finished_ == 0) return std::nullopt;
  const double per_task = finished_s_ / static_cast<double>(finished_);
  double total = 0;
  for (std::size_t i = *current_; i < budgets_s_.size(); ++i) {
    total += budgets_s_[i] > 0 ? std::min(per_task, budgets_s_[i]) : per_task;
  }
  return total;
}

std::optional<double> SweepEta::remaining_parallel_s(const std::vector<double>& running_elapsed_s,
                                                     std::size_t ranks) const {
  const auto not_started = remaining_at_start_s();
  if (!not_started) return std::nullopt;
  const double per_task = finished_s_ / static_cast<double>(finished_);
  double total = *not_started;
  for (double elapsed : running_elapsed_s) total += std::max(0.0, per_task - elapsed);
  return total / static_cast<double>(std::max<std::size_t>(ranks, 1));
}

}  // namespace kforge
