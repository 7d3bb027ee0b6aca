// `kforge sweep PLAN --mpi`: every rank opens its own device and database;
// rank 0 merges what an earlier run left, works out the unfinished tasks,
// hands them out one at a time as ranks ask (a thread of its own serves the
// other ranks while it tunes too), and merges every rank's database into the
// plan's at the end (docs/sweep.md, "MPI").
#include "mpi_sweep.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "device_registry.hpp"
#include "mpi_session.hpp"
#include "rank_databases.hpp"
#include "sweep_coordinator.hpp"

namespace kforge::cli {

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

std::unique_ptr<RankSetup> prepare_rank(const CommonOptions& o, const SweepOptions& s,
                                        const MpiSession& mpi) {
  auto r = std::make_unique<RankSetup>();
  r->catalog = make_catalog(o);  // first: it registers declared operators the plan names
  r->plan = unwrap(load_sweep_plan(s.plan));
  r->shard = unwrap(parse_shard(s.shard));
  r->tasks = shard_tasks(r->plan, r->shard);
  // "auto": the node's GPUs shared out by local rank (or the CPU device, shared).
  const std::string selector =
      o.device == "auto" ? local_rank_selector(list_devices(), mpi.local_rank()) : o.device;
  r->device = unwrap(kforge::open_device(selector));
  const auto& info = r->device->info();
  for (const auto& t : r->tasks) {
    r->templates.push_back(task_templates(r->plan, t, r->catalog, info.backend, !o.template_dirs.empty()));
  }
  r->identity = {mpi.rank(), host_name(), info.name, info.selector, info.hardware_key(), info.backend};
  return r;
}

/// Rank 0's view of the plan before any task: what each device's templates
/// are and which tasks an earlier sweep (or run) finished.
class PlanState {
 public:
  PlanState(const RankSetup& setup, const CommonOptions& o) : setup_(setup), o_(o) {}

  const std::vector<const TemplateSource*>& templates(const std::string& backend, std::size_t task) {
    auto it = by_backend_.find(backend);
    if (it == by_backend_.end()) {
      std::vector<std::vector<const TemplateSource*>> all;
      for (const auto& t : setup_.tasks) {
        all.push_back(task_templates(setup_.plan, t, setup_.catalog, backend, !o_.template_dirs.empty()));
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
  const CommonOptions& o_;
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
void work(RankSetup& setup, Database& db, const RunnerOptions& runner,
          const std::function<std::optional<std::size_t>(const std::optional<nlohmann::json>&)>& next) {
  std::optional<nlohmann::json> last;
  const auto on_event = kill_hook(setup.identity.rank);
  while (auto i = next(last)) {
    TaskReport r = run_task(*setup.device, db, setup.tasks.at(*i), setup.templates.at(*i), runner, on_event,
                            [](const std::string&) {}, /*profile=*/false);
    r.rank = setup.identity.rank;
    r.device_key = setup.identity.device_key;
    last = report_json(r);
  }
}

/// Rank 0: answers the other ranks until each has said it is done.
void serve(const MpiSession& mpi, SweepCoordinator& coordinator) {
  int remaining = mpi.size() - 1;
  auto refreshed = Clock::now();
  while (remaining > 0) {
    auto m = mpi.poll();
    if (!m) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // polls rather than spins on a core
      if (seconds_since(refreshed) > 1) {
        coordinator.refresh();
        refreshed = Clock::now();
      }
      continue;
    }
    if (m->done) {
      --remaining;
      continue;
    }
    const auto request = nlohmann::json::parse(m->text);
    std::optional<nlohmann::json> report;
    if (request.contains("report") && !request["report"].is_null()) report = request["report"];
    const auto next = coordinator.request(m->from, report);
    mpi.answer(m->from, next ? static_cast<long long>(*next) : -1);
  }
}

/// A rank other than 0: asks rank 0 for tasks over MPI.
void work_remote(const MpiSession& mpi, RankSetup& setup, std::unique_ptr<Database> db,
                 const RunnerOptions& runner) {
  try {
    work(setup, *db, runner, [&](const std::optional<nlohmann::json>& report) -> std::optional<std::size_t> {
      const long long i = mpi.ask(nlohmann::json{{"report", report ? *report : nlohmann::json()}}.dump());
      if (i < 0) return std::nullopt;
      return static_cast<std::size_t>(i);
    });
    db.reset();  // closed before rank 0 merges it
  } catch (const std::exception& e) {
    mpi.abort(e.what());  // rank 0 waits for this rank: end the job rather than hang
  }
  mpi.send_done();
}

struct Outcome {
  std::vector<TaskReport> reports;
  std::vector<RankStats> stats;
  double window_s = 0;  ///< from the first hand-out to the last rank done
};

/// Rank 0: tunes its share while a thread serves the other ranks (or, where
/// MPI allows one thread only, serves them and tunes nothing).
Outcome coordinate(const MpiSession& mpi, RankSetup& setup, std::unique_ptr<Database> own_db,
                   const RunnerOptions& runner, SweepCoordinator& coordinator) {
  const auto t0 = Clock::now();
  const auto local = [&](const std::optional<nlohmann::json>& report) {
    return coordinator.request(0, report);
  };
  if (mpi.size() == 1) {
    work(setup, *own_db, runner, local);
  } else if (mpi.threads_ok()) {
    std::thread server([&] { serve(mpi, coordinator); });
    try {
      work(setup, *own_db, runner, local);
    } catch (const std::exception& e) {
      mpi.abort(e.what());  // the server thread and the other ranks cannot be stopped cleanly
    }
    server.join();
  } else {
    coordinator.note("MPI gives one thread only: rank 0 hands out tasks and tunes none");
    serve(mpi, coordinator);
  }
  own_db.reset();
  Outcome out;
  out.window_s = seconds_since(t0);
  out.stats = coordinator.rank_stats();
  return out;
}

nlohmann::json ranks_json(const std::vector<RankIdentity>& ranks, const Outcome& out) {
  nlohmann::json j = nlohmann::json::array();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto row = ranks[r].to_json();
    row["tasks"] = out.stats[r].tasks;
    row["busy_s"] = out.stats[r].busy_s;
    row["idle_s"] = std::max(0.0, out.window_s - out.stats[r].busy_s);
    j.push_back(row);
  }
  return j;
}

void print_ranks(const std::vector<RankIdentity>& ranks, const Outcome& out) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    rows.push_back({std::to_string(r), ranks[r].host, ranks[r].device, ranks[r].selector,
                    std::to_string(out.stats[r].tasks), fmt(out.stats[r].busy_s, 3),
                    fmt(std::max(0.0, out.window_s - out.stats[r].busy_s), 3)});
  }
  print_table({"rank", "host", "device", "selector", "tasks", "busy s", "idle s"}, rows);
}

/// Rank 0's account of every task once the rank databases are merged:
/// what a rank reported, or what an earlier sweep stored.
std::vector<TaskReport> final_reports(
    const RankSetup& setup, PlanState& state, Database& db, const std::vector<RankIdentity>& ranks,
    const std::vector<std::pair<std::int64_t, const RankIdentity*>>& finished,
    const std::vector<std::optional<TaskReport>>& received) {
  const SweepHistory merged(db);
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
      TaskReport r = stored_report(db, t, id->device_key, state.templates(id->backend, i), id->backend);
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

void print_outcome(const CommonOptions& o, const RankSetup& setup, const std::vector<RankIdentity>& ranks,
                   const Outcome& out, const std::vector<std::string>& merges, double total_s) {
  const auto& plan = setup.plan;
  if (o.json) {
    nlohmann::json j = {
        {"plan", plan.file},
        {"name", plan.name},
        {"shard", {{"index", setup.shard.index}, {"count", setup.shard.count}}},
        {"mpi", {{"ranks", ranks_json(ranks, out)}, {"window_s", out.window_s}, {"merged", merges}}},
        {"database", o.db},
        {"time_s", total_s},
        {"tasks", nlohmann::json::array()}};
    for (const auto& r : out.reports) j["tasks"].push_back(report_json(r));
    print_json(j);
    return;
  }
  std::string where = "shard " + std::to_string(setup.shard.index) + "/" + std::to_string(setup.shard.count) +
                      " on " + std::to_string(ranks.size()) + " MPI ranks";
  print_summary(plan.file, where, o.db, out.reports, total_s, true);
  print_ranks(ranks, out);
}

}  // namespace

void run_mpi_sweep(const CommonOptions& o, const SweepOptions& s) {
  MpiSession mpi;
  const auto t0 = Clock::now();
  std::unique_ptr<RankSetup> setup;
  mpi.on_every_rank([&] { setup = prepare_rank(o, s, mpi); });
  const std::vector<std::string> identities = mpi.gather(setup->identity.to_json().dump());

  // Rank 0: merge what an earlier run's ranks stored, then find what is left.
  std::vector<RankIdentity> ranks;
  std::unique_ptr<Database> plan_db;
  std::unique_ptr<PlanState> state;
  std::vector<MergedRankDatabase> leftovers;
  std::vector<std::pair<std::int64_t, const RankIdentity*>> finished;
  mpi.on_every_rank([&] {
    if (mpi.rank() != 0) return;
    for (const auto& text : identities) ranks.push_back(RankIdentity::from_json(nlohmann::json::parse(text)));
    plan_db = unwrap(Database::open(o.db, Database::Mode::kReadWrite));
    leftovers = merge_rank_databases(*plan_db, o.db);
    std::filesystem::create_directories(rank_databases_dir(o.db));
    const SweepHistory history(*plan_db);
    state = std::make_unique<PlanState>(*setup, o);
    for (std::size_t i = 0; i < setup->tasks.size(); ++i)
      finished.push_back(state->finished(history, i, ranks));
  });
  // Every rank opens its own database once rank 0 has merged the old ones.
  std::unique_ptr<Database> rank_db;
  mpi.on_every_rank([&] {
    rank_db = unwrap(Database::open(rank_database_path(o.db, mpi.rank()), Database::Mode::kReadWrite));
  });
  if (mpi.rank() != 0) {
    work_remote(mpi, *setup, std::move(rank_db), s.runner);
    return;
  }

  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < setup->tasks.size(); ++i) {
    if (!finished[i].first) pending.push_back(i);
  }
  SweepCoordinator coordinator(setup->tasks, pending, ranks, s.quiet || o.json);
  std::vector<std::string> merges;
  for (const auto& m : leftovers) {
    merges.push_back(merge_line(m) + " (earlier run)");
    coordinator.note("merged " + merges.back());
    for (std::size_t i : pending) {
      if (m.problems.count(setup->tasks[i].key)) coordinator.prefer(i, m.rank);
    }
  }
  coordinator.note(setup->plan.file + ": " + std::to_string(setup->tasks.size()) + " tasks, " +
                   std::to_string(setup->tasks.size() - pending.size()) + " finished earlier, " +
                   std::to_string(pending.size()) + " to run on " + std::to_string(mpi.size()) + " ranks");
  for (const auto& id : ranks) {
    coordinator.note("rank " + std::to_string(id.rank) + ": " + id.device + " (" + id.selector + ") on " +
                     id.host);
  }
  Outcome out = coordinate(mpi, *setup, std::move(rank_db), s.runner, coordinator);
  for (const auto& m : merge_rank_databases(*plan_db, o.db)) {
    merges.push_back(merge_line(m));
    coordinator.note("merged " + merges.back());
  }
  remove_rank_databases(o.db);
  out.reports = final_reports(*setup, *state, *plan_db, ranks, finished, coordinator.reports());
  print_outcome(o, *setup, ranks, out, merges, seconds_since(t0));
  throw_if_tasks_failed(out.reports);
}

}  // namespace kforge::cli
