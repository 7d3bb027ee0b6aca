// The lookup's side of online tuning (online_tuning.hpp): which answers are
// misses, what a miss starts, and what the lookup learns when a tune ends.
#include <sstream>

#include "runtime/lookup/lookup.hpp"
#include "runtime/lookup/lookup_source.hpp"

namespace kforge {

namespace {

/// Not an exact answer, or an exact one from an online tune that was cut
/// short (resumed: stored candidates count towards its budget).
bool is_miss(const Selection& s) {
  if (s.rule == SelectionRule::kOverride) return false;
  return s.rule != SelectionRule::kExact || (!s.online.empty() && s.tune_unfinished);
}

std::string describe(const OnlineOutcome& o) {
  std::ostringstream out;
  out.precision(3);
  if (!o.started) return "not started: " + o.note;
  out << "tuner exit " << o.exit_code << " after " << o.seconds << " s, " << o.note;
  return out.str();
}

}  // namespace

Status Lookup::set_online_tuning(const OnlineTuningOptions& options) {
  std::shared_ptr<OnlineTuner> old;  // stopped outside the lock: its thread may be waiting for it
  {
    std::lock_guard lock(select_mutex_);
    if (options.mode != OnlineMode::kOff) {
      const LookupSource* user = sources_.empty() || sources_[0]->role != "user" ? nullptr : sources_[0].get();
      if (user == nullptr) {
        return Error::bad_input("online tuning: the lookup has no user database for the results (LookupOptions::user_db)");
      }
      if (options.max_evals <= 0 && options.time_budget_s <= 0) {
        return Error::bad_input("online tuning: give a budget, max_evals or time_budget_s above 0");
      }
    }
    old = std::move(online_);
    if (options.mode != OnlineMode::kOff) {
      OnlineJob job;
      job.db = sources_[0]->path;
      job.device = device_.info().hardware_key();
      job.template_dirs = catalog_.dirs();
      online_ = std::make_shared<OnlineTuner>(options, std::move(job), [this](const OnlineOutcome&) {
        std::lock_guard relock(select_mutex_);
        refresh_user_source();
        cache_.clear();
      });
    }
    cache_.clear();
  }
  old.reset();
  return ok_status();
}

bool Lookup::wait_online_idle(double timeout_s) {
  std::shared_ptr<OnlineTuner> online;
  {
    std::lock_guard lock(select_mutex_);
    online = online_;
  }
  return online == nullptr || online->wait_idle(timeout_s);
}

void Lookup::refresh_user_source() {
  if (sources_.empty() || sources_[0]->role != "user" || sources_[0]->db) return;
  auto reopened = open_lookup_source(sources_[0]->path, "user");
  if (reopened.ok()) sources_[0] = std::move(*reopened);
}

Result<Selection> Lookup::answer_online(const Problem& requested, Selection sel) {
  if (!is_miss(sel)) return sel;
  OnlineTuner& online = *online_;
  const Problem& p = sel.problem;  // normalized: the key the tuner stores under
  const OnlineTuningOptions& o = online.options();
  if (o.mode == OnlineMode::kBlocking && !online.asked(p)) {
    const OnlineOutcome outcome = online.tune_now(p);
    refresh_user_source();
    KF_TRY_ASSIGN(again, select_uncached(requested));
    again.explanation += "online: tuned here first, blocking (" + describe(outcome) + ")\n";
    return again;
  }
  std::ostringstream why;
  if (online.queue(p)) {
    why << "online: queued for tuning in the background (up to " << o.max_evals << " candidates, "
        << o.time_budget_s << " s) into " << sources_[0]->path << "\n";
  } else if (auto outcome = online.outcome(p)) {
    why << "online: tuned once in this process without an exact answer (" << describe(*outcome) << ")\n";
  } else {
    why << "online: being tuned in the background\n";
  }
  sel.explanation += why.str();
  return sel;
}

}  // namespace kforge
