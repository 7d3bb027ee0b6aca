// The supervisor side of the worker process: spawn, talk, time out, reap.
#include "tuner/worker/worker_runner.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>

#include "tuner/worker/stderr_relay.hpp"
#include "tuner/worker/worker_protocol.hpp"

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;

/// `seconds` after `from` (default: now).
Clock::time_point after(double seconds, Clock::time_point from = Clock::now()) {
  return from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

constexpr std::string_view kReferenceDirPrefix = "kforge-references-";

/// Removes the reference directories of tuners that died without removing
/// their own (SIGKILL): each is named kforge-references-<pid>-XXXXXX, and
/// one whose process is gone is stale. A directory of a live process, or
/// one whose name says nothing, is left alone. (A tuner in another PID
/// namespace sharing this TMPDIR could lose its directory; its workers then
/// compute their references again, nothing worse.)
void remove_stale_reference_dirs(const std::filesystem::path& tmp) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
    const auto& entry = *it;
    const std::string name = entry.path().filename().string();
    if (name.rfind(kReferenceDirPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kReferenceDirPrefix.size());
    char* digits_end = nullptr;
    const long pid = std::strtol(rest.c_str(), &digits_end, 10);
    if (pid <= 0 || digits_end == rest.c_str() || *digits_end != '-' || pid == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    std::filesystem::remove_all(entry.path(), ignored);
  }
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o.precision(3);
  o << s << " s";
  return o.str();
}

/// The batch in `n` shares: whole groups, each to the share with the fewest
/// candidates so far, so that each group is one program in one process;
/// ungrouped candidates in turn.
std::vector<std::vector<CandidateRef>> split_into_shares(const std::vector<CandidateRef>& batch,
                                                         std::size_t n) {
  std::vector<std::vector<CandidateRef>> parts(n);
  if (std::none_of(batch.begin(), batch.end(), [](const CandidateRef& c) { return c.group >= 0; })) {
    for (std::size_t i = 0; i < batch.size(); ++i) parts[i % n].push_back(batch[i]);
    return parts;
  }
  std::vector<std::pair<std::pair<std::string, int>, std::vector<CandidateRef>>> groups;
  for (const CandidateRef& c : batch) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& x) { return x.first == std::make_pair(c.template_name, c.group); });
    if (g == groups.end()) g = groups.insert(groups.end(), {{c.template_name, c.group}, {}});
    g->second.push_back(c);
  }
  for (auto& [key, members] : groups) {
    auto& part = *std::min_element(parts.begin(), parts.end(),
                                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
    part.insert(part.end(), members.begin(), members.end());
  }
  return parts;
}

}  // namespace

struct WorkerRunner::Worker {
  pid_t pid = -1;
  std::unique_ptr<MessageChannel> channel;
};

/// The deadline of one candidate's request as the worker reports its phases:
/// the compile timeout, then the launch limit, narrowed once a launch runs
/// or the first one is done.
class WorkerRunner::PhaseDeadline {
 public:
  /// `expected_ms`: the launches' expected time (0: none yet);
  /// `held_here`: validated in this worker, its code generated then.
  PhaseDeadline(const WorkerTimeouts& timeouts, const MeasurementProtocol& protocol, double expected_ms,
                double fastest_validated_ms, bool held_here)
      : timeouts_(timeouts),
        protocol_(protocol),
        expected_ms_(expected_ms),
        fastest_validated_ms_(fastest_validated_ms),
        held_here_(held_here),
        limit_(timeouts.compile_s),
        deadline_(after(limit_)) {}

  /// Moves on with the phase a "phase" message reached.
  void reach(const std::string& reached) {
    if (reached == "running") {
      first_launch_runs();
    } else if (reached == "launched") {
      first_launch_done();
    } else {
      launches_begin();
    }
  }
  Clock::time_point deadline() const { return deadline_; }
  double limit_s() const { return limit_; }
  const std::string& phase() const { return phase_; }
  /// What ran before a timeout, for its reason ("" before any launch ran).
  std::string what_ran() const {
    if (!running_) return "";
    if (held_here_) return " (its code generated by its validation launch in this worker)";
    return ", " + seconds_text(std::chrono::duration<double>(deadline_ - running_since_).count()) +
           " of them after its first launch began to run (its code generated)";
  }

 private:
  void launches_begin() {
    phase_ = "launch";
    launches_began_ = Clock::now();
    if (held_here_ && expected_ms_ > 0) {
      running_ = true;  // since its validation launch
      running_since_ = launches_began_;
      limit_ = timeouts_.run_limit_s(protocol_, expected_ms_);
    } else {
      limit_ = timeouts_.launch_limit_s(protocol_, expected_ms_);
    }
    deadline_ = after(limit_);
  }
  // The first launch runs: its code is generated. What is left
  // scales with the expected run time, over a smaller floor.
  // Before any candidate has a time (validations ahead of timing),
  // the fastest validation launch of the run is the expected one.
  void first_launch_runs() {
    if (phase_ != "launch" || running_) return;
    running_ = true;
    running_since_ = Clock::now();
    const double run_ms = expected_ms_ > 0 ? expected_ms_ : fastest_validated_ms_;
    const auto sooner = after(timeouts_.run_limit_s(protocol_, run_ms));
    if (run_ms > 0 && sooner < deadline_) {
      deadline_ = sooner;
      limit_ = std::chrono::duration<double>(deadline_ - launches_began_).count();
    }
  }
  // The first validation launch is done. Before any candidate has a
  // time, the launches' expected time is this candidate's own: the
  // limit scales with that launch, not with the floor alone. From
  // when it began to run, over the smaller floor, where that is
  // known (its code generation left out); else from the launches'
  // start (write, launch, code generation included).
  void first_launch_done() {
    if (expected_ms_ > 0 || scaled_by_own_launch_) return;
    scaled_by_own_launch_ = true;
    const Clock::time_point from = running_ ? running_since_ : launches_began_;
    const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - from).count();
    deadline_ = after(
        running_ ? timeouts_.run_limit_s(protocol_, first_ms) : timeouts_.launch_limit_s(protocol_, first_ms),
        from);
    limit_ = std::chrono::duration<double>(deadline_ - launches_began_).count();
  }

  const WorkerTimeouts& timeouts_;
  const MeasurementProtocol& protocol_;
  double expected_ms_, fastest_validated_ms_;
  bool held_here_;
  std::string phase_ = "compile";
  double limit_;
  Clock::time_point deadline_, launches_began_, running_since_;
  bool scaled_by_own_launch_ = false, running_ = false;
};

WorkerRunner::WorkerRunner(RunnerSetup setup, std::vector<std::string> command, WorkerTimeouts timeouts)
    : setup_(std::move(setup)), command_(std::move(command)), timeouts_(timeouts) {
  generators_.resize(static_cast<std::size_t>(std::max(0, setup_.pipeline.code_generators)));
  if (setup_.reference_dir.empty()) {
    // Private to this run; without it every worker computes its references.
    std::error_code ec;
    const auto tmp = std::filesystem::temp_directory_path(ec);
    if (!ec) {
      remove_stale_reference_dirs(tmp);
      std::string tmpl =
          (tmp / (std::string(kReferenceDirPrefix) + std::to_string(getpid()) + "-XXXXXX")).string();
      if (mkdtemp(tmpl.data())) owned_reference_dir_ = setup_.reference_dir = tmpl;
    }
  }
}

WorkerRunner::~WorkerRunner() {
  std::vector<std::unique_ptr<Worker>*> all{&worker_};
  for (auto& g : generators_) all.push_back(&g);
  for (auto* w : all) {
    if (*w) (void)(*w)->channel->send({{"type", "quit"}});
  }
  // A process that does not leave promptly is killed, never waited on.
  const auto deadline = after(2.0);
  for (auto* w : all) {
    if (!*w) continue;
    int status = 0;
    pid_t r;
    while ((r = waitpid((*w)->pid, &status, WNOHANG)) == 0 && Clock::now() <= deadline) usleep(10000);
    if (r == 0) {
      stop(*w, true);
    } else {
      w->reset();
    }
  }
  if (!owned_reference_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(owned_reference_dir_, ec);
  }
}

std::string WorkerRunner::stop(std::unique_ptr<Worker>& w, bool kill_first) {
  if (!w) return "";
  if (kill_first) kill(w->pid, SIGKILL);
  w->channel.reset();  // closing our end makes a live worker's next read fail
  int status = 0;
  pid_t r;
  do {
    r = waitpid(w->pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  w.reset();
  if (r < 0) return "";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "";
}

Status WorkerRunner::ensure_worker() {
  if (worker_) return ok_status();
  if (started_++ > 0) ++restarts_;
  const auto t0 = std::chrono::steady_clock::now();
  Status started = start(worker_, setup_);
  setup_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return started;
}

Status WorkerRunner::start(std::unique_ptr<Worker>& w, const RunnerSetup& setup_to_send) {
  if (w) return ok_status();
  if (command_.empty()) return Error::internal("worker runner: no worker command");
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Error{ErrorCode::kInternal, "worker runner: socketpair failed", std::strerror(errno)};
  }
  // argv is built before fork: the child only calls async-signal-safe functions.
  std::vector<std::string> args = command_;
  args.push_back("3");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const int err = start_stderr_relay();  // -1: the worker writes to stderr itself
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    if (err >= 0) close(err);
    return Error{ErrorCode::kInternal, "worker runner: fork failed", std::strerror(errno)};
  }
  if (pid == 0) {
    // The worker dies with the tuner; its stdout goes to stderr so that it
    // can never corrupt the tuner's own (JSON) output, and its stderr
    // through the relay, which leaves out the compiler's bare counts.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    if (err >= 0 && dup2(err, 2) < 0) _exit(126);
    if (dup2(fds[1], 3) < 0 || dup2(2, 1) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  if (err >= 0) close(err);
  w = std::make_unique<Worker>();
  w->pid = pid;
  w->channel = std::make_unique<MessageChannel>(fds[0]);

  nlohmann::json setup = to_json(setup_to_send);
  setup["type"] = "setup";
  Status sent = w->channel->send(setup);
  nlohmann::json reply;
  auto wait =
      sent.ok() ? w->channel->receive(after(timeouts_.setup_s), reply) : MessageChannel::Wait::kClosed;
  // A declared operator's worker says which user reference it runs first,
  // so that a reference that brings the worker down is named.
  std::string reference;
  while (wait == MessageChannel::Wait::kMessage && reply.value("type", "") == "phase") {
    reference = reply.value("reference", "");
    wait = w->channel->receive(after(reference.empty() ? timeouts_.setup_s : timeouts_.reference_s), reply);
  }
  if (wait == MessageChannel::Wait::kMessage && reply.value("type", "") == "ready") {
    references_reused_ += reply.value("references_loaded", 0);
    return ok_status();
  }
  std::string why;
  if (wait == MessageChannel::Wait::kMessage) {
    why = reply.value("message", reply.dump());
  } else if (wait == MessageChannel::Wait::kTimedOut && !reference.empty()) {
    why = "the reference (" + reference + ") did not return within " + seconds_text(timeouts_.reference_s);
  } else if (wait == MessageChannel::Wait::kTimedOut) {
    why = "no answer within " + seconds_text(timeouts_.setup_s);
  }
  const std::string ended = stop(w, wait != MessageChannel::Wait::kClosed);
  if (why.empty() && !reference.empty()) why = "the reference (" + reference + ") did not return: " + ended;
  return Error{ErrorCode::kInternal,
               "tuner worker (" + command_.front() + ") failed to start: " + (why.empty() ? ended : why),
               ended};
}

Result<Evaluation> WorkerRunner::evaluate(const std::string& template_name, const Config& config,
                                          double best_ms,
                                          const std::function<void(std::string_view)>& on_phase) {
  return request("evaluate", template_name, config, best_ms, on_phase);
}

Result<Evaluation> WorkerRunner::validate(const std::string& template_name, const Config& config,
                                          const std::function<void(std::string_view)>& on_phase) {
  KF_TRY_ASSIGN(e, request("validate", template_name, config, 0.0, on_phase));
  if (e.status == CandidateStatus::kOk && !e.untimed_ms.empty()) {
    validated_ms_[{template_name, config.canonical_name()}] = {started_, e.untimed_ms.front()};
    if (e.untimed_ms.front() > 0 &&
        (fastest_validated_ms_ <= 0 || e.untimed_ms.front() < fastest_validated_ms_)) {
      fastest_validated_ms_ = e.untimed_ms.front();
    }
  }
  return e;
}

double WorkerRunner::take_validated_ms(const CandidateRef& c, double best_ms, bool& held_here) {
  // Held by this worker since its validation: before any candidate has a
  // time, the launches' expected time is that validation launch's.
  // Its code was generated then, so its launches get the run floor.
  double expected_ms = best_ms;
  held_here = false;
  if (auto held = validated_ms_.find({c.template_name, c.config}); held != validated_ms_.end()) {
    held_here = held->second.first == started_;
    if (held_here && expected_ms <= 0) expected_ms = held->second.second;
    validated_ms_.erase(held);
  }
  return expected_ms;
}

Result<Evaluation> WorkerRunner::request(const char* kind, const std::string& template_name,
                                         const Config& config, double best_ms,
                                         const std::function<void(std::string_view)>& on_phase) {
  KF_TRY(ensure_worker());
  CandidateRef candidate;
  candidate.template_name = template_name;
  candidate.config = config.canonical_name();
  const double rebuild_s = rebuild_share(candidate);
  KF_TRY(ensure_worker());  // a rebuild that failed took its worker along
  bool held_here = false;
  const double expected_ms = take_validated_ms(candidate, best_ms, held_here);
  KF_TRY(worker_->channel->send(
      {{"type", kind}, {"template", template_name}, {"config", candidate.config}, {"best_ms", best_ms}}));
  PhaseDeadline deadline(timeouts_, setup_.protocol, expected_ms, fastest_validated_ms_, held_here);
  for (;;) {
    nlohmann::json m;
    const auto wait = worker_->channel->receive(deadline.deadline(), m);
    if (wait != MessageChannel::Wait::kMessage) {
      return lost_worker(wait == MessageChannel::Wait::kTimedOut, deadline, candidate, rebuild_s);
    }
    const std::string type = m.value("type", "");
    if (type == "phase") {
      const std::string reached = m.value("phase", "");
      deadline.reach(reached);
      if (on_phase) on_phase(reached);
      continue;
    }
    if (type == "evaluation") {
      Evaluation e = evaluation_from_json(m);
      e.compile_s += rebuild_s;
      if (m.value("restart", false)) stop_worker(true);
      return e;
    }
    stop_worker(true);
    return Error::internal("tuner worker: unexpected message " + m.dump());
  }
}

Evaluation WorkerRunner::lost_worker(bool timed_out, const PhaseDeadline& deadline, const CandidateRef& c,
                                     double rebuild_s) {
  Evaluation e;
  e.compile_s = rebuild_s;
  const std::string candidate = "(template " + c.template_name + " config " + c.config + ")";
  if (timed_out) {
    e.status = CandidateStatus::kTimeout;
    stop_worker(true);
    e.reason = "no result within " + seconds_text(deadline.limit_s()) + " in the " + deadline.phase() +
               " phase" + deadline.what_ran() + " " + candidate +
               "; the worker was killed and a new one continues";
  } else {
    e.status = CandidateStatus::kCrash;
    const std::string ended = stop_worker(false);
    e.reason = "the worker process " + (ended.empty() ? std::string("ended") : ended) + " in the " +
               deadline.phase() + " phase " + candidate + "; a new worker continues";
  }
  return e;
}

Result<RetimeReport> WorkerRunner::retime(const std::vector<CandidateRef>& finalists) {
  KF_TRY(ensure_worker());
  // A worker started after the finalists' evaluations builds their shares
  // again, so that they are the programs PoCL has cached.
  for (const CandidateRef& f : finalists) (void)rebuild_share(f);
  KF_TRY(ensure_worker());
  KF_TRY(worker_->channel->send({{"type", "retime"}, {"finalists", to_json(finalists)}}));
  const double limit = static_cast<double>(finalists.size()) *
                       (timeouts_.compile_s + timeouts_.launch_limit_s(setup_.protocol, 0) +
                        setup_.protocol.finalist_rounds * timeouts_.launch_floor_s);
  nlohmann::json m;
  const auto wait = worker_->channel->receive(after(limit), m);
  if (wait != MessageChannel::Wait::kMessage || m.value("type", "") != "retimed") {
    const std::string ended = stop_worker(true);
    return Error{ErrorCode::kLaunch, "tuner worker: re-timing the finalists failed",
                 wait == MessageChannel::Wait::kMessage ? m.value("message", m.dump()) : ended};
  }
  RetimeReport out;
  for (const auto& t : m.at("timings")) out.timings.push_back(timing_from_json(t));
  out.compiled_alone = m.value("compiled_alone", 0);
  return out;
}

Result<PrecompileReport> WorkerRunner::precompile(const std::vector<CandidateRef>& batch) {
  if (!generators_.empty()) return precompile_in_generators(batch);
  return precompile_in_worker(batch);
}

Result<PrecompileReport> WorkerRunner::precompile_in_worker(const std::vector<CandidateRef>& batch) {
  KF_TRY_ASSIGN(r, build_in_worker(batch));
  // With compile overlap the batch is a window that only queues compiles
  // and slides every turn: nothing to build again after a restart.
  if (!r.overlapped) shares_.push_back({batch, started_});
  return r;
}

double WorkerRunner::rebuild_share(const CandidateRef& c) {
  if (restarts_ == 0) return 0;  // the first worker holds every share it built
  for (Share& share : shares_) {
    if (share.worker == started_ || share.members.size() < 2) continue;
    const bool member = std::any_of(share.members.begin(), share.members.end(), [&](const CandidateRef& m) {
      return m.template_name == c.template_name && m.config == c.config;
    });
    if (!member) continue;
    share.worker = started_;  // once per worker
    auto built = build_in_worker(share.members);
    if (!built.ok()) {
      share.members.clear();  // never again: its candidates compile one at a time
      return 0;
    }
    ++shares_rebuilt_;
    return built->wall_s;
  }
  return 0;
}

Result<PrecompileReport> WorkerRunner::build_in_worker(const std::vector<CandidateRef>& batch) {
  KF_TRY(ensure_worker());
  KF_TRY(worker_->channel->send({{"type", "precompile"}, {"batch", to_json(batch)}}));
  const double limit = static_cast<double>(batch.size()) * timeouts_.compile_s;
  nlohmann::json m;
  const auto wait = worker_->channel->receive(after(limit), m);
  if (wait != MessageChannel::Wait::kMessage || m.value("type", "") != "precompiled") {
    const std::string ended = stop_worker(wait != MessageChannel::Wait::kClosed);
    return Error{ErrorCode::kCompile, "tuner worker: compiling a batch ahead failed",
                 wait == MessageChannel::Wait::kMessage ? m.value("message", m.dump()) : ended};
  }
  PrecompileReport r;
  r.queued = m.value("queued", 0);
  r.overlapped = m.value("overlapped", false);
  r.compiled = m.value("compiled", 0);
  r.failed = m.value("failed", 0);
  r.cache_hits = m.value("cache_hits", 0);
  r.combined = m.value("combined", 0);
  r.wall_s = m.value("wall_s", 0.0);
  return r;
}

/// One precompile() among the code generators: each one's share, which of
/// them built theirs, and the launches each has left. Its methods are safe
/// from one thread per generator.
struct WorkerRunner::GeneratorRound {
  WorkerRunner& runner;
  std::vector<std::vector<CandidateRef>> parts;
  std::vector<bool> working, built;
  std::vector<std::deque<CandidateRef>> left;
  std::mutex lost_mutex, queue_mutex;
  std::atomic<int> generated{0};

  GeneratorRound(WorkerRunner& r, std::vector<std::vector<CandidateRef>> shares)
      : runner(r), parts(std::move(shares)), working(parts.size()), built(parts.size()), left(parts.size()) {}
  std::size_t size() const { return parts.size(); }

  /// Waits for generator k's reply of one of `types`; a timeout, an end or
  /// another reply costs the generator (killed, counted lost).
  bool await(std::size_t k, std::initializer_list<std::string_view> types, double limit_s,
             nlohmann::json& m) {
    auto& generator = runner.generators_[k];
    const auto wait = generator->channel->receive(after(limit_s), m);
    const std::string type = wait == MessageChannel::Wait::kMessage ? m.value("type", "") : "";
    if (std::find(types.begin(), types.end(), type) != types.end()) return true;
    runner.stop(generator, wait != MessageChannel::Wait::kClosed);
    std::lock_guard<std::mutex> lock(lost_mutex);
    ++runner.generators_lost_;
    return false;
  }

  /// Asks generator g to build share `k`.
  bool send_share(std::size_t g, std::size_t k) {
    return runner.generators_[g]->channel->send({{"type", "precompile"}, {"batch", to_json(parts[k])}}).ok();
  }
  double share_limit_s(std::size_t k) const {
    return static_cast<double>(parts[k].size()) * runner.timeouts_.compile_s;
  }

  /// Starts every generator and sends it its share. A generator without a
  /// share (a batch of fewer groups than generators) only takes launches
  /// from the others.
  void start_builds(const RunnerSetup& setup, std::size_t batch_size) {
    for (std::size_t k = 0; k < size(); ++k) {
      if (parts[k].empty() && batch_size < 2) continue;
      if (!runner.start(runner.generators_[k], setup).ok()) {
        ++runner.generators_lost_;
        continue;
      }
      if (parts[k].empty()) {
        built[k] = true;
        continue;
      }
      working[k] = send_share(k, k);
    }
  }

  /// Waits for each share's build (within the compile timeout per candidate).
  void collect_builds(PrecompileReport& r) {
    for (std::size_t k = 0; k < size(); ++k) {
      nlohmann::json m;
      if (!working[k] || !await(k, {"precompiled"}, share_limit_s(k), m)) continue;
      built[k] = true;
      r.queued += m.value("queued", 0);
      r.compiled += m.value("compiled", 0);
      r.failed += m.value("failed", 0);
      r.cache_hits += m.value("cache_hits", 0);
    }
  }

  /// The candidates to launch, by the share whose build holds them.
  void queue_launches() {
    for (std::size_t k = 0; k < size(); ++k) {
      if (!built[k]) continue;
      for (const CandidateRef& c : parts[k]) {
        if (!c.build_only) left[k].push_back(c);
      }
    }
  }

  /// Generator g's next candidate: its own share's first, else the last of
  /// the longest other share (`from`); false when none is left.
  bool take_next(std::size_t g, CandidateRef& c, std::size_t& from) {
    std::lock_guard<std::mutex> lock(queue_mutex);
    from = g;
    if (left[g].empty()) {
      for (std::size_t k = 0; k < size(); ++k) {
        if (left[k].size() > left[from].size()) from = k;
      }
    }
    if (left[from].empty()) return false;
    if (from == g) {
      c = left[g].front();
      left[g].pop_front();
    } else {
      c = left[from].back();
      left[from].pop_back();
    }
    return true;
  }

  /// Launches one work-group of `c` in generator g: the launch floor until
  /// the launch runs (PoCL generating its code), then run_floor_s, since its
  /// code is cached by then and a hang costs the generator little more.
  bool generate(std::size_t g, const CandidateRef& c, nlohmann::json& m) {
    const WorkerTimeouts& timeouts = runner.timeouts_;
    if (!runner.generators_[g]
             ->channel->send({{"type", "generate"}, {"template", c.template_name}, {"config", c.config}})
             .ok() ||
        !await(g, {"phase", "generated"}, timeouts.launch_floor_s, m)) {
      return false;
    }
    if (m.value("type", "") == "phase" &&
        !await(g, {"generated"}, std::min(timeouts.run_floor_s, timeouts.launch_floor_s), m)) {
      ++runner.generators_lost_running_;
      return false;
    }
    return true;
  }

  /// Generator g's launches until none is left or it is lost.
  void serve(std::size_t g) {
    std::vector<bool> has(size(), false);
    has[g] = true;
    CandidateRef c;
    std::size_t from = g;
    while (take_next(g, c, from)) {
      nlohmann::json m;
      if (!has[from]) {
        if (!send_share(g, from) || !await(g, {"precompiled"}, share_limit_s(from), m)) {
          std::lock_guard<std::mutex> lock(queue_mutex);
          left[from].push_back(c);  // not this candidate's doing
          return;
        }
        has[from] = true;
      }
      if (!generate(g, c, m)) return;
      generated += m.value("ok", false);
    }
  }

  /// serve() in every generator that built its share, at once.
  void launch_all() {
    std::vector<std::thread> servers;
    for (std::size_t g = 0; g < size(); ++g) {
      if (built[g]) servers.emplace_back([this, g] { serve(g); });
    }
    for (auto& t : servers) t.join();
  }
};

Result<PrecompileReport> WorkerRunner::precompile_in_generators(const std::vector<CandidateRef>& batch) {
  const auto t0 = Clock::now();
  RunnerSetup gen = setup_;
  gen.code_generator = true;
  gen.pipeline.code_generators = 0;
  gen.pipeline.overlap = false;
  gen.pipeline.threads = 1;  // one compile at a time per process; the processes share the cores
  GeneratorRound round(*this, split_into_shares(batch, generators_.size()));

  // 1. Each generator builds its share, all at once.
  PrecompileReport r;
  round.start_builds(gen, batch.size());
  round.collect_builds(r);

  // 2. One work-group of every candidate launched once, in whichever
  //    generator is free: its own share first, then the rest of the
  //    longest other one, whose program it builds first (from PoCL's cache,
  //    where that share's generator put it). Each launch has the launch
  //    floor; a candidate that crashes or hangs costs its generator, and
  //    the others take over what it had left.
  round.queue_launches();
  round.launch_all();
  r.generated = round.generated;

  // 3. The measuring worker builds each share as its generator did, so PoCL
  //    finds the program and its machine code in its cache (a combined
  //    program is found only under the same source). A share whose build
  //    failed is left to evaluate(), one candidate at a time.
  for (std::size_t k = 0; k < round.size(); ++k) {
    if (!round.built[k] || round.parts[k].empty()) continue;
    KF_TRY_ASSIGN(own, precompile_in_worker(round.parts[k]));
    r.combined += own.combined;
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace kforge
