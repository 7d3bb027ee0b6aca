// Rank 0's hand-out, reports and progress for a distributed sweep.
#include "sweep/sweep_coordinator.hpp"

#include <unistd.h>

#include <cstdio>

#include "core/significant.hpp"

namespace kforge {

nlohmann::json RankIdentity::to_json() const {
  return {{"rank", rank},
          {"host", host},
          {"device", device},
          {"selector", selector},
          {"device_key", device_key},
          {"backend", backend}};
}

RankIdentity RankIdentity::from_json(const nlohmann::json& j) {
  return {j.at("rank").get<int>(),
          j.at("host").get<std::string>(),
          j.at("device").get<std::string>(),
          j.at("selector").get<std::string>(),
          j.at("device_key").get<std::string>(),
          j.at("backend").get<std::string>()};
}

namespace {

std::vector<double> budgets_of(const std::vector<SweepTask>& tasks, const std::vector<std::size_t>& pending) {
  std::vector<double> out;
  for (std::size_t i : pending) out.push_back(tasks[i].budget.time_budget_s);
  return out;
}

}  // namespace

SweepCoordinator::SweepCoordinator(const std::vector<SweepTask>& tasks, std::vector<std::size_t> pending,
                                   std::vector<RankIdentity> ranks, bool quiet)
    : tasks_(tasks),
      ranks_(std::move(ranks)),
      dispatch_(pending, static_cast<int>(ranks_.size())),
      eta_(budgets_of(tasks, pending)),
      reports_(tasks.size()),
      stats_(ranks_.size()),
      started_(ranks_.size()),
      quiet_(quiet),
      tty_(isatty(STDERR_FILENO) != 0) {
  eta_.start(0);
}

void SweepCoordinator::prefer(std::size_t index, int rank) {
  std::lock_guard lock(mu_);
  dispatch_.prefer(index, rank);
}

double SweepCoordinator::elapsed_s(std::chrono::steady_clock::time_point since) const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

std::optional<double> SweepCoordinator::eta_s() const {
  std::vector<double> running;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (dispatch_.running(static_cast<int>(r))) running.push_back(elapsed_s(started_[r]));
  }
  return eta_.remaining_parallel_s(running, ranks_.size());
}

std::string SweepCoordinator::counts() const {
  std::string s =
      "[" + std::to_string(dispatch_.finished()) + "/" + std::to_string(dispatch_.total()) + " done";
  if (failed_ > 0) s += ", " + std::to_string(failed_) + " failed";
  if (auto left = eta_s()) s += ", eta " + significant(*left, 3) + " s";
  return s + "]";
}

std::string SweepCoordinator::status_line() const {
  std::string s = counts();
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const auto task = dispatch_.running(static_cast<int>(r));
    s += "  r" + std::to_string(r) + ": " +
         (task ? tasks_[*task].key + " " + significant(elapsed_s(started_[r]), 3) + "s" : std::string("idle"));
  }
  return s;
}

void SweepCoordinator::print(const std::string& line) {
  if (quiet_) return;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s\n%s", line.c_str(), status_line().c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

void SweepCoordinator::note(const std::string& line) {
  std::lock_guard lock(mu_);
  print(line);
}

void SweepCoordinator::refresh() {
  std::lock_guard lock(mu_);
  if (quiet_ || !tty_) return;
  std::fprintf(stderr, "\r\033[K%s", status_line().c_str());
  std::fflush(stderr);
}

void SweepCoordinator::record(int rank, const nlohmann::json& report) {
  const auto task = dispatch_.running(rank);
  if (!task) return;  // a report of nothing handed out: ignored
  TaskReport r = report_from_json(report, tasks_[*task]);
  const double busy = elapsed_s(started_[static_cast<std::size_t>(rank)]);
  dispatch_.finish(rank);
  eta_.finish(busy);
  auto& stats = stats_[static_cast<std::size_t>(rank)];
  ++stats.tasks;
  stats.busy_s += busy;
  std::string what;
  if (r.state == TaskReport::State::kError) {
    ++failed_;
    what = "error: " + r.error;
  } else {
    what = "ran, " + std::to_string(r.evaluated) + " evaluated (" + std::to_string(r.evaluated_now) +
           " now), failed: " + failures_text(r.failed) + ", winner " +
           (r.winner ? r.winner->template_name + " " + r.winner->config + " " +
                           significant(r.winner->timing.median_ms) + " ms"
                     : std::string("none"));
  }
  print(counts() + " rank " + std::to_string(rank) + " finished task " + std::to_string(r.task->index) + " " +
        r.task->key + " in " + significant(busy, 3) + " s: " + what);
  reports_[*task] = std::move(r);
}

std::optional<std::size_t> SweepCoordinator::request(int rank, const std::optional<nlohmann::json>& report) {
  std::lock_guard lock(mu_);
  if (report) record(rank, *report);
  const auto next = dispatch_.next(rank);
  if (!next) return std::nullopt;
  started_[static_cast<std::size_t>(rank)] = std::chrono::steady_clock::now();
  eta_.start(++handed_out_);
  const auto& id = ranks_[static_cast<std::size_t>(rank)];
  print(counts() + " rank " + std::to_string(rank) + " (" + id.device + ", " + id.selector +
        ") starts task " + std::to_string(tasks_[*next].index) + " " + tasks_[*next].key);
  return next;
}

void SweepCoordinator::lose(int rank, const std::string& why) {
  std::lock_guard lock(mu_);
  if (dispatch_.lost(rank)) return;
  const auto task = dispatch_.lose(rank);
  stats_[static_cast<std::size_t>(rank)].lost = true;
  print(counts() + " rank " + std::to_string(rank) + " lost (" + why + ")" +
        (task ? ": task " + std::to_string(tasks_[*task].index) + " " + tasks_[*task].key +
                    " goes back to the queue"
              : std::string()));
}

bool SweepCoordinator::work_may_remain() const {
  std::lock_guard lock(mu_);
  return dispatch_.pending() > 0 || dispatch_.running_count() > 0;
}

std::vector<std::optional<TaskReport>> SweepCoordinator::reports() const {
  std::lock_guard lock(mu_);
  return reports_;
}

std::vector<RankStats> SweepCoordinator::rank_stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace kforge
