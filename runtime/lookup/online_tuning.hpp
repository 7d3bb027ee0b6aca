// Online tuning: a lookup that misses (any answer but `exact` or an
// override) tunes the problem where the program runs, in a tuner process of
// its own, and the next select answers `exact` (docs/runtime.md, "Online
// tuning"). The tuner process is `kforge tune`'s protocol (every candidate
// validated against the operator's reference, crashing and hanging
// candidates isolated in its worker) on the lookup's device, into the user
// database, under a budget of evaluations and seconds.
//   background  select answers at once from the chain; the miss is queued,
//               tuned one problem at a time, and the lookup's cached
//               selections forgotten when a tune ends
//   blocking    the first select of a problem tunes it, then answers
// The tuner runs at nice 19 with its own process group; a lookup destroyed
// while it runs stops it (SIGTERM to the group): what it stored stays, and a
// later miss resumes from there (the budget counts stored candidates).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.hpp"
#include "runtime/lookup/online_job.hpp"

namespace kforge {

enum class OnlineMode { kOff, kBackground, kBlocking };

std::string_view online_mode_name(OnlineMode mode);
std::optional<OnlineMode> parse_online_mode(std::string_view text);

struct OnlineTuningOptions {
  OnlineMode mode = OnlineMode::kOff;
  int max_evals = 20;          ///< candidates per problem (stored ones count)
  double time_budget_s = 60;   ///< per problem; 0: none
  int warm_start = 4;          ///< tuned neighbours proposed first
  double lease_wait_s = 600;   ///< while another tuner holds the database
  /// The tuner process's argv before the job: empty means $KFORGE_TUNER,
  /// else `kforge` on PATH, each followed by "__online-tune". The Python
  /// package gives `python -m kforge._online_tune`.
  std::vector<std::string> command;
};

/// `base` with KFORGE_ONLINE_TUNING (off, background, blocking),
/// KFORGE_ONLINE_MAX_EVALS and KFORGE_ONLINE_TIME_BUDGET applied; a bad
/// value is kBadInput naming the variable and the value.
Result<OnlineTuningOptions> online_options_from_env(OnlineTuningOptions base);

/// How one online tune ended.
struct OnlineOutcome {
  std::string problem_key;
  bool started = false;  ///< whether the tuner process was started
  int exit_code = -1;    ///< its exit status; 128 + N for signal N; -1: not started, or lost
  double seconds = 0;
  std::string note;  ///< why it did not start, or where its log is
};

/// Starts tuner processes for one lookup. `done` is called after every
/// background tune, on the tuner's thread.
class OnlineTuner {
 public:
  OnlineTuner(OnlineTuningOptions options, OnlineJob base_job, std::function<void(const OnlineOutcome&)> done);
  ~OnlineTuner();
  OnlineTuner(const OnlineTuner&) = delete;
  OnlineTuner& operator=(const OnlineTuner&) = delete;

  const OnlineTuningOptions& options() const { return options_; }
  /// Whether `problem` was asked for before in this process (queued, tuned
  /// or failed): each problem is tuned at most once per lookup.
  bool asked(const Problem& problem) const;
  /// Background: queues `problem` unless asked before; true when queued now.
  bool queue(const Problem& problem);
  /// Blocking: tunes `problem` now, in the calling thread.
  OnlineOutcome tune_now(const Problem& problem);
  /// Waits until nothing is queued or running; false after `timeout_s`.
  bool wait_idle(double timeout_s);
  /// The outcome of `problem`'s tune, where it ended.
  std::optional<OnlineOutcome> outcome(const Problem& problem) const;
  /// "DB.online.log": what the tuner processes printed.
  std::string log_path() const { return base_job_.db + ".online.log"; }

 private:
  void run_queue();
  OnlineOutcome run_job(const Problem& problem);
  std::vector<std::string> command_for(const Problem& problem, std::string& why_not) const;

  OnlineTuningOptions options_;
  OnlineJob base_job_;
  std::function<void(const OnlineOutcome&)> done_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Problem> queue_;
  std::set<std::string> asked_;                   ///< problem keys
  std::vector<OnlineOutcome> outcomes_;
  bool running_ = false, stopping_ = false;
  int child_pgid_ = 0;  ///< the running tuner's process group; 0: none
  std::thread thread_;  ///< started at the first queue()
};

}  // namespace kforge
