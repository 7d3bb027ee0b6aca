#include "runtime/lookup/online_tuning.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "runtime/platform/subprocess.hpp"

extern char** environ;

namespace kforge {

namespace {

Result<int> env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || errno != 0 || n < 0 || n > 1000000) {
    return Error::bad_input(std::string(name) + "='" + v + "': expected an integer from 0 to 1000000");
  }
  return static_cast<int>(n);
}

Result<double> env_seconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (*end != '\0' || !(s >= 0) || s > 1e7) {
    return Error::bad_input(std::string(name) + "='" + v + "': expected seconds, from 0 to 1e7");
  }
  return s;
}

/// Starts argv in a process group of its own, its output appended to `log`.
Result<pid_t> spawn_logged(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error{ErrorCode::kNotFound, "cannot start the online tuner " + argv[0], std::strerror(rc)};
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string_view online_mode_name(OnlineMode mode) {
  switch (mode) {
    case OnlineMode::kOff: return "off";
    case OnlineMode::kBackground: return "background";
    case OnlineMode::kBlocking: return "blocking";
  }
  return "off";
}

std::optional<OnlineMode> parse_online_mode(std::string_view text) {
  for (OnlineMode m : {OnlineMode::kOff, OnlineMode::kBackground, OnlineMode::kBlocking}) {
    if (text == online_mode_name(m)) return m;
  }
  return std::nullopt;
}

Result<OnlineTuningOptions> online_options_from_env(OnlineTuningOptions base) {
  if (const char* v = std::getenv("KFORGE_ONLINE_TUNING"); v != nullptr && *v != '\0') {
    const auto mode = parse_online_mode(v);
    if (!mode) {
      return Error::bad_input(std::string("KFORGE_ONLINE_TUNING='") + v + "': expected off, background or blocking");
    }
    base.mode = *mode;
  }
  KF_TRY_ASSIGN(evals, env_int("KFORGE_ONLINE_MAX_EVALS", base.max_evals));
  KF_TRY_ASSIGN(budget, env_seconds("KFORGE_ONLINE_TIME_BUDGET", base.time_budget_s));
  base.max_evals = evals;
  base.time_budget_s = budget;
  return base;
}

OnlineTuner::OnlineTuner(OnlineTuningOptions options, OnlineJob base_job,
                         std::function<void(const OnlineOutcome&)> done)
    : options_(std::move(options)), base_job_(std::move(base_job)), done_(std::move(done)) {
  base_job_.mode = std::string(online_mode_name(options_.mode));
  base_job_.max_evals = options_.max_evals;
  base_job_.time_budget_s = options_.time_budget_s;
  base_job_.warm_start = options_.warm_start;
  base_job_.lease_wait_s = options_.lease_wait_s;
}

OnlineTuner::~OnlineTuner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    if (child_pgid_ > 0) ::kill(-child_pgid_, SIGTERM);
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool OnlineTuner::asked(const Problem& problem) const {
  std::lock_guard lock(mutex_);
  return asked_.count(problem.key()) > 0;
}

bool OnlineTuner::queue(const Problem& problem) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || !asked_.insert(problem.key()).second) return false;
    queue_.push_back(problem);
    if (!thread_.joinable()) thread_ = std::thread([this] { run_queue(); });
  }
  changed_.notify_all();
  return true;
}

OnlineOutcome OnlineTuner::tune_now(const Problem& problem) {
  {
    std::lock_guard lock(mutex_);
    asked_.insert(problem.key());
  }
  return run_job(problem);
}

bool OnlineTuner::wait_idle(double timeout_s) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                           [this] { return queue_.empty() && !running_; });
}

std::optional<OnlineOutcome> OnlineTuner::outcome(const Problem& problem) const {
  std::lock_guard lock(mutex_);
  const std::string key = problem.key();
  for (const auto& o : outcomes_) {
    if (o.problem_key == key) return o;
  }
  return std::nullopt;
}

void OnlineTuner::run_queue() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Problem next = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    OnlineOutcome o = run_job(next);
    if (done_) done_(o);
    lock.lock();
    running_ = false;
    changed_.notify_all();
  }
}

std::vector<std::string> OnlineTuner::command_for(const Problem& problem, std::string& why_not) const {
  std::vector<std::string> argv = options_.command;
  if (argv.empty()) {
    const char* env = std::getenv("KFORGE_TUNER");
    const std::string program = env != nullptr && *env != '\0' ? std::string(env) : find_program("kforge");
    if (program.empty()) {
      why_not = "no tuner to run: set KFORGE_TUNER to the kforge executable, or put kforge on PATH";
      return {};
    }
    argv = {program, "__online-tune"};
  }
  OnlineJob job = base_job_;
  job.problem = problem;
  argv.push_back(to_json(job).dump());
  return argv;
}

OnlineOutcome OnlineTuner::run_job(const Problem& problem) {
  OnlineOutcome o;
  o.problem_key = problem.key();
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> argv = command_for(problem, o.note);
  if (!argv.empty()) {
    std::unique_lock lock(mutex_);
    auto pid = stopping_ ? Result<pid_t>(Error{ErrorCode::kInternal, "the lookup is closing", ""})
                         : spawn_logged(argv, log_path());
    if (!pid.ok()) {
      o.note = pid.error().message;
    } else {
      child_pgid_ = *pid;
      o.started = true;
      lock.unlock();
      o.exit_code = wait_exit_code(*pid);
      lock.lock();
      child_pgid_ = 0;
      o.note = (o.exit_code < 0 ? "its exit status was lost (SIGCHLD ignored?); log " : "log ") + log_path();
    }
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::lock_guard lock(mutex_);
  outcomes_.push_back(o);
  return o;
}

}  // namespace kforge
