// A distributed sweep's ranks (distributed_sweep.hpp). Errors end every
// rank together (MpiSession::on_every_rank), so a failed Result is thrown
// here (Result::value) rather than returned.
#include "sweep/mpi/distributed_sweep.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "core/significant.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "sweep/rank_databases.hpp"
#include "sweep/sweep_lock.hpp"

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// What every rank knows before the first task: the plan, its device and
/// the templates of every task on that device.
struct RankSetup {
  TemplateCatalog catalog;
  SweepPlan plan;
  SweepShard shard;
  std::vector<SweepTask> tasks;
  std::unique_ptr<Device> device;
  std::vector<std::vector<const TemplateSource*>> templates;
  RankIdentity identity;
};

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TemplateCatalog make_catalog(const std::vector<std::string>& template_dirs) {
  TemplateCatalog c = TemplateCatalog::builtin().value();
  for (const auto& dir : template_dirs) c.add_dir(dir).value();
  return c;
}

std::unique_ptr<RankSetup> prepare_rank(const DistributedSweepOptions& s, const MpiSession& mpi) {
  auto r = std::make_unique<RankSetup>();
  r->catalog = make_catalog(s.template_dirs);  // first: it registers declared operators the plan names
  r->plan = load_sweep_plan(s.plan).value();
  r->shard = parse_shard(s.shard).value();
  r->tasks = shard_tasks(r->plan, r->shard);
  // "auto": the node's GPUs shared out by local rank (or the CPU device, shared).
  const std::string selector =
      s.device == "auto" ? local_rank_selector(list_devices(), mpi.local_rank()) : s.device;
  r->device = open_device(selector).value();
  const auto& info = r->device->info();
  for (const auto& t : r->tasks) {
    r->templates.push_back(task_templates(r->plan, t, r->catalog, info.backend, !s.template_dirs.empty()).value());
  }
  r->identity = {mpi.rank(), host_name(), info.name, info.selector, info.hardware_key(), info.backend};
  return r;
}

/// Rank 0's view of the plan before any task: what each device's templates
/// are and which tasks an earlier sweep (or run) finished.
class PlanState {
 public:
  PlanState(const RankSetup& setup, bool has_user_templates)
      : setup_(setup), has_user_templates_(has_user_templates) {}

  const std::vector<const TemplateSource*>& templates(const std::string& backend, std::size_t task) {
    auto it = by_backend_.find(backend);
    if (it == by_backend_.end()) {
      std::vector<std::vector<const TemplateSource*>> all;
      for (const auto& t : setup_.tasks) {
        all.push_back(task_templates(setup_.plan, t, setup_.catalog, backend, has_user_templates_).value());
      }
      it = by_backend_.emplace(backend, std::move(all)).first;
    }
    return it->second[task];
  }

  /// The finished sweep and device of task `i` on any rank's device; id 0: none.
  std::pair<std::int64_t, const RankIdentity*> finished(const SweepHistory& history, std::size_t i,
                                                        const std::vector<RankIdentity>& ranks) {
    for (const auto& id : ranks) {
      const auto& t = setup_.tasks[i];
      if (auto sweep = history.finished_by(t, id.device_key, templates(id.backend, i), id.backend)) {
        return {sweep, &id};
      }
    }
    return {0, nullptr};
  }

 private:
  const RankSetup& setup_;
  bool has_user_templates_;
  std::map<std::string, std::vector<std::vector<const TemplateSource*>>> by_backend_;
};

/// The fault tests' hook: with KFORGE_TEST_KILL_RANK=R, rank R dies by
/// SIGKILL as soon as it has stored its first result, mid-task, as a
/// crashed node would.
std::function<void(const TuneEvent&)> kill_hook(int rank) {
  const char* v = std::getenv("KFORGE_TEST_KILL_RANK");
  if (!v || std::string(v) != std::to_string(rank)) return [](const TuneEvent&) {};
  return [](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::kCandidate && e.outcome && !e.outcome->reused) raise(SIGKILL);
  };
}

/// Tunes what `next` hands out until it says none is left; `next` gets the
/// report of the task before.
void work(RankSetup& setup, Database& db, const DistributedSweepOptions& s,
          const std::function<std::optional<std::size_t>(const std::optional<nlohmann::json>&)>& next) {
  std::optional<nlohmann::json> last;
  const auto on_event = kill_hook(setup.identity.rank);
  while (auto i = next(last)) {
    TaskReport r = run_task(*setup.device, db, setup.tasks.at(*i), setup.templates.at(*i), s.runner, on_event,
                            [](const std::string&) {}, s.profile, s.command_line);
    r.rank = setup.identity.rank;
    r.device_key = setup.identity.device_key;
    last = report_json(r);
  }
}

constexpr double kHeartbeatS = 2;

/// A rank's heartbeat to rank 0, from a thread of its own while it tunes.
class Heartbeat {
 public:
  explicit Heartbeat(const MpiSession& mpi) : thread_([this, &mpi] { beat(mpi); }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  void beat(const MpiSession& mpi) {
    std::unique_lock lock(mu_);
    while (!stop_) {
      lock.unlock();
      mpi.send_heartbeat();
      lock.lock();
      wake_.wait_for(lock, std::chrono::duration<double>(kHeartbeatS), [this] { return stop_; });
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

/// Rank 0's view of which ranks still count: a rank that has sent a
/// heartbeat and then falls silent for `lost_after_s` is lost (a rank that
/// never beats, where MPI gives it one thread, is never counted lost).
class Liveness {
 public:
  Liveness(int ranks, double lost_after_s)
      : heard_(static_cast<std::size_t>(ranks), Clock::now()), beats_(heard_.size(), false),
        gone_(heard_.size(), false), lost_after_s_(lost_after_s) {}

  void heard(int rank, bool heartbeat) {
    heard_[static_cast<std::size_t>(rank)] = Clock::now();
    if (heartbeat) beats_[static_cast<std::size_t>(rank)] = true;
  }
  void gone(int rank) { gone_[static_cast<std::size_t>(rank)] = true; }
  bool is_gone(int rank) const { return gone_[static_cast<std::size_t>(rank)]; }

  /// The ranks silent too long since the last call, each reported once.
  std::vector<int> newly_lost() {
    std::vector<int> out;
    if (lost_after_s_ <= 0) return out;
    for (std::size_t r = 1; r < heard_.size(); ++r) {
      if (gone_[r] || !beats_[r] || seconds_since(heard_[r]) <= lost_after_s_) continue;
      gone_[r] = true;
      out.push_back(static_cast<int>(r));
    }
    return out;
  }

 private:
  std::vector<Clock::time_point> heard_;
  std::vector<bool> beats_, gone_;  ///< by rank: has sent a heartbeat; done or lost
  double lost_after_s_;
};

/// Rank 0: answers the other ranks until each has said it is done or is
/// lost; then tells those done whether to finalize (not when one was lost).
/// Returns whether a rank was lost.
bool serve(const MpiSession& mpi, SweepCoordinator& coordinator, double lost_after_s) {
  int remaining = mpi.size() - 1;
  bool any_lost = false;
  std::vector<int> done;
  Liveness live(mpi.size(), lost_after_s);
  auto refreshed = Clock::now();
  while (remaining > 0) {
    auto m = mpi.poll();
    if (!m) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // polls rather than spins on a core
      if (seconds_since(refreshed) > 1) {
        for (int r : live.newly_lost()) {
          coordinator.lose(r, "nothing heard for " + significant(lost_after_s, 3) + " s");
          any_lost = true;
          --remaining;
        }
        coordinator.refresh();
        refreshed = Clock::now();
      }
      continue;
    }
    const bool counted = !live.is_gone(m->from);
    live.heard(m->from, m->kind == MpiSession::Message::Kind::kHeartbeat);
    if (m->kind == MpiSession::Message::Kind::kHeartbeat) continue;
    if (m->kind == MpiSession::Message::Kind::kDone) {
      if (counted) --remaining;  // a lost rank was no longer waited for
      live.gone(m->from);
      done.push_back(m->from);
      continue;
    }
    const auto request = nlohmann::json::parse(m->text);
    std::optional<nlohmann::json> report;
    if (request.contains("report") && !request["report"].is_null()) report = request["report"];
    const auto next = coordinator.request(m->from, report);  // nothing for a lost rank
    mpi.answer(m->from, next ? static_cast<long long>(*next) : -1);
  }
  for (int r : done) mpi.answer(r, any_lost ? 0 : 1);
  return any_lost;
}

/// A rank other than 0: asks rank 0 for tasks over MPI.
void work_remote(MpiSession& mpi, RankSetup& setup, std::unique_ptr<Database> db,
                 const DistributedSweepOptions& s) {
  std::optional<Heartbeat> heartbeat;
  if (mpi.threads_ok()) heartbeat.emplace(mpi);
  try {
    work(setup, *db, s, [&](const std::optional<nlohmann::json>& report) -> std::optional<std::size_t> {
      const long long i = mpi.ask(nlohmann::json{{"report", report ? *report : nlohmann::json()}}.dump());
      if (i < 0) return std::nullopt;
      return static_cast<std::size_t>(i);
    });
    db.reset();  // closed before rank 0 merges it
  } catch (const std::exception& e) {
    mpi.abort(e.what());  // rank 0 waits for this rank: end the job rather than hang
  }
  heartbeat.reset();
  if (!mpi.send_done()) mpi.skip_finalize();
}

/// Rank 0: tunes its share while a thread serves the other ranks (or, where
/// MPI allows one thread only, serves them and tunes nothing).
DistributedSweepOutcome coordinate(MpiSession& mpi, RankSetup& setup, std::unique_ptr<Database> own_db,
                                   const DistributedSweepOptions& s, SweepCoordinator& coordinator) {
  const auto t0 = Clock::now();
  // Rank 0 keeps asking while another rank runs a task, so that the task of
  // a rank lost late still finds a taker.
  const auto local = [&](std::optional<nlohmann::json> report) -> std::optional<std::size_t> {
    for (;;) {
      if (auto next = coordinator.request(0, report)) return next;
      report.reset();
      if (s.lost_after_s <= 0 || !coordinator.work_may_remain()) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  };
  if (mpi.size() == 1) {
    work(setup, *own_db, s, local);
  } else if (mpi.threads_ok()) {
    bool lost = false;
    std::thread server([&] { lost = serve(mpi, coordinator, s.lost_after_s); });
    try {
      work(setup, *own_db, s, local);
    } catch (const std::exception& e) {
      mpi.abort(e.what());  // the server thread and the other ranks cannot be stopped cleanly
    }
    server.join();
    if (lost) mpi.skip_finalize();
  } else {
    coordinator.note("MPI gives one thread only: rank 0 hands out tasks and tunes none");
    if (serve(mpi, coordinator, s.lost_after_s)) mpi.skip_finalize();
  }
  own_db.reset();
  DistributedSweepOutcome out;
  out.window_s = seconds_since(t0);
  out.stats = coordinator.rank_stats();
  return out;
}

/// Rank 0's account of every task once the rank databases are merged:
/// what a rank reported, or what an earlier sweep stored.
std::vector<TaskReport> final_reports(
    const RankSetup& setup, PlanState& state, Database& db, const std::vector<RankIdentity>& ranks,
    const std::vector<std::pair<std::int64_t, const RankIdentity*>>& finished,
    const std::vector<std::optional<TaskReport>>& received) {
  const SweepHistory merged = SweepHistory::read(db).value();
  std::vector<TaskReport> out;
  for (std::size_t i = 0; i < setup.tasks.size(); ++i) {
    const SweepTask& t = setup.tasks[i];
    if (received[i]) {
      TaskReport r = *received[i];
      const std::string& backend = ranks.at(static_cast<std::size_t>(r.rank)).backend;
      // The sweep's id in the merged database, not in the rank's.
      if (r.state == TaskReport::State::kRan)
        r.sweep_id = merged.finished_by(t, r.device_key, state.templates(backend, i), backend);
      out.push_back(std::move(r));
    } else if (const auto& [sweep, id] = finished[i]; sweep) {
      TaskReport r = stored_report(db, t, id->device_key, state.templates(id->backend, i), id->backend).value();
      r.sweep_id = sweep;
      out.push_back(std::move(r));
    } else {
      TaskReport r;
      r.task = &t;
      r.state = TaskReport::State::kError;
      r.error = "not run: no rank reported it";
      out.push_back(std::move(r));
    }
  }
  return out;
}

/// Rank 0 before any task: the lock on the rank folder, what an earlier
/// run's ranks stored merged, and which tasks are finished.
struct PlanStart {
  std::optional<SweepLock> lock;  ///< held until the job ends
  std::vector<RankIdentity> ranks;
  std::unique_ptr<Database> db;
  std::unique_ptr<PlanState> state;
  std::vector<MergedRankDatabase> leftovers;
  std::vector<std::pair<std::int64_t, const RankIdentity*>> finished;
};

void start_plan(PlanStart& p, const RankSetup& setup, const DistributedSweepOptions& s,
                const std::vector<std::string>& identities) {
  p.lock.emplace(SweepLock::acquire(s.db).value());
  for (const auto& text : identities) p.ranks.push_back(RankIdentity::from_json(nlohmann::json::parse(text)));
  p.db = Database::open(s.db, Database::Mode::kReadWrite).value();
  p.leftovers = merge_rank_databases(*p.db, s.db).value();
  std::filesystem::create_directories(rank_databases_dir(s.db));
  const SweepHistory history = SweepHistory::read(*p.db).value();
  p.state = std::make_unique<PlanState>(setup, !s.template_dirs.empty());
  for (std::size_t i = 0; i < setup.tasks.size(); ++i) p.finished.push_back(p.state->finished(history, i, p.ranks));
}

/// Rank 0's coordinator for the tasks not finished, told what the earlier run's ranks hold.
std::vector<std::size_t> pending_tasks(const PlanStart& p) {
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < p.finished.size(); ++i) {
    if (!p.finished[i].first) pending.push_back(i);
  }
  return pending;
}

void announce(SweepCoordinator& coordinator, const RankSetup& setup, const PlanStart& p,
              const std::vector<std::size_t>& pending, std::vector<std::string>& merges, int size) {
  for (const auto& m : p.leftovers) {
    merges.push_back(merge_line(m) + " (earlier run)");
    coordinator.note("merged " + merges.back());
    for (std::size_t i : pending) {
      if (m.problems.count(setup.tasks[i].key)) coordinator.prefer(i, m.rank);
    }
  }
  coordinator.note(setup.plan.file + ": " + std::to_string(setup.tasks.size()) + " tasks, " +
                   std::to_string(setup.tasks.size() - pending.size()) + " finished earlier, " +
                   std::to_string(pending.size()) + " to run on " + std::to_string(size) + " ranks");
  for (const auto& id : p.ranks) {
    coordinator.note("rank " + std::to_string(id.rank) + ": " + id.device + " (" + id.selector + ") on " +
                     id.host);
  }
}

}  // namespace

std::optional<DistributedSweepOutcome> run_distributed_sweep(MpiSession& mpi, const DistributedSweepOptions& s) {
  std::unique_ptr<RankSetup> setup;
  mpi.on_every_rank([&] { setup = prepare_rank(s, mpi); });
  const std::vector<std::string> identities = mpi.gather(setup->identity.to_json().dump());
  PlanStart start;
  mpi.on_every_rank([&] {
    if (mpi.rank() == 0) start_plan(start, *setup, s, identities);
  });
  // Every rank opens its own database once rank 0 has merged the old ones.
  std::unique_ptr<Database> rank_db;
  mpi.on_every_rank(
      [&] { rank_db = Database::open(rank_database_path(s.db, mpi.rank()), Database::Mode::kReadWrite).value(); });
  if (mpi.rank() != 0) {
    work_remote(mpi, *setup, std::move(rank_db), s);
    return std::nullopt;
  }
  const std::vector<std::size_t> pending = pending_tasks(start);
  SweepCoordinator coordinator(setup->tasks, pending, start.ranks, s.quiet);
  std::vector<std::string> merges;
  announce(coordinator, *setup, start, pending, merges, mpi.size());
  DistributedSweepOutcome out = coordinate(mpi, *setup, std::move(rank_db), s, coordinator);
  const std::vector<MergedRankDatabase> merged = merge_rank_databases(*start.db, s.db).value();
  for (const auto& m : merged) {
    merges.push_back(merge_line(m));
    coordinator.note("merged " + merges.back());
  }
  remove_rank_databases(s.db);
  out.reports = final_reports(*setup, *start.state, *start.db, start.ranks, start.finished, coordinator.reports());
  out.plan = setup->plan;
  out.shard = setup->shard;
  out.ranks = start.ranks;
  out.merges = std::move(merges);
  // Moving the vector keeps its elements where they are: the reports'
  // task pointers stay valid.
  out.tasks = std::move(setup->tasks);
  return out;
}

}  // namespace kforge
