// Python bindings: a tuning run and a sweep with a progress callback, and
// the entry point of the worker processes that run their candidates.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <optional>

#include "bindings/python/bindings.hpp"
#include "bindings/python/json_to_python.hpp"
#include "bindings/python/problem_from_python.hpp"
#include "bindings/python/python_errors.hpp"
#include "db/database.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "sweep/serial_sweep.hpp"
#include "tuner/online_job_runner.hpp"
#include "tuner/template_selection.hpp"
#include "tuner/tuner.hpp"
#include "tuner/worker/worker_main.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

/// What tune() takes besides the problem, as Python passes it.
struct TuneFields {
  std::string db;
  std::string strategy;
  int max_evals = 0;
  double time_budget_s = 0;
  int no_improvement = 0;
  std::uint64_t seed = 1;
  int warm_start = 0;
  std::optional<std::string> template_name, config;
  std::string library;  ///< compare, forbid, force; "": $KFORGE_LIBRARY_<OP>, else compare
  std::vector<std::string> template_dirs, worker;
  bool binary_cache = true;
  std::string cache_dir;  ///< "": BinaryCache::default_dir()
};

std::string_view event_kind(TuneEvent::Kind k) {
  switch (k) {
    case TuneEvent::Kind::kStart:
      return "start";
    case TuneEvent::Kind::kPhase:
      return "phase";
    case TuneEvent::Kind::kCandidate:
      return "candidate";
    case TuneEvent::Kind::kLeaderChanged:
      return "leader_changed";
    case TuneEvent::Kind::kDone:
      return "done";
  }
  return "unknown";
}

nb::object outcome_dict(const CandidateOutcome* o) {
  if (!o) return nb::none();
  nb::dict d;
  d["template_name"] = o->template_name;
  d["config"] = o->config;
  d["status"] = status_name(o->status);
  d["reason"] = o->reason;
  d["median_ms"] = o->timing.median_ms;
  d["reused"] = o->reused;
  return d;
}

nb::dict event_dict(const TuneEvent& e) {
  nb::dict d;
  d["kind"] = event_kind(e.kind);
  if (e.kind == TuneEvent::Kind::kPhase)
    d["phase"] = e.phase == TuneEvent::Phase::kCompile ? "compile" : "retime";
  d["done"] = e.done;
  d["total"] = e.total;
  d["batch"] = e.batch;
  d["elapsed_s"] = e.elapsed_s;
  d["outcome"] = outcome_dict(e.outcome);
  d["best"] = outcome_dict(e.best);
  d["note"] = e.note;
  d["failures"] = e.failures;
  return d;
}

/// What `kforge tune` would tune (tuner/template_selection.hpp): with user
/// template directories, their templates of the operator alone; a bad
/// `library` or no template raises BadInputError naming the field.
std::vector<const TemplateSource*> templates_to_tune(const TemplateCatalog& catalog, const Problem& p,
                                                     const std::string& backend, const TuneFields& f) {
  const LibraryPolicy policy = unwrap(library_policy_for(p.op, f.library, "library"));
  std::vector<const TemplateSource*> out = select_templates(
      catalog, p.op, backend, f.template_name.value_or(""), !f.template_dirs.empty(), policy);
  if (out.empty()) {
    throw_bad_input("template: no template for " + p.op + " on " + backend +
                    (f.template_name ? " named '" + *f.template_name + "'" : ""));
  }
  return out;
}

TuneRequest make_request(const Problem& problem, std::vector<const TemplateSource*> templates,
                         const TuneFields& f) {
  TuneRequest req;
  req.problem = problem;
  req.templates = std::move(templates);
  req.strategy = f.strategy;
  req.only_config = f.config;
  req.max_evals = f.max_evals;
  req.time_budget_s = f.time_budget_s;
  req.no_improvement = f.no_improvement;
  req.seed = f.seed;
  req.warm_start = f.warm_start;
  req.worker_command = f.worker;
  if (f.binary_cache) req.cache_dir = f.cache_dir.empty() ? BinaryCache::default_dir() : f.cache_dir;
  req.command_line = "python: kforge.tune(" + problem.key() + ")";
  return req;
}

/// Runs the tuner without the GIL; `progress` is called with it for every
/// event. An exception it raises is re-raised once the run has ended (the
/// run itself is not interrupted: every result it stores stays valid).
nb::object run_tune(PyDevice& device, const ProblemFields& pf, const TuneFields& f, nb::object progress) {
  TemplateCatalog catalog = unwrap(TemplateCatalog::builtin());  // first: it registers declared operators
  for (const auto& dir : f.template_dirs) unwrap(catalog.add_dir(dir));
  Problem problem = problem_from_fields(pf);
  const Operator* op = find_operator(problem.op);
  auto db = unwrap(Database::open(f.db, Database::Mode::kReadWrite));
  TuneRequest req =
      make_request(problem, templates_to_tune(catalog, problem, device.device->info().backend, f), f);
  std::optional<nb::python_error> raised;
  std::optional<Result<TuneSummary>> summary;
  {
    nb::gil_scoped_release release;
    Tuner tuner(*device.device, *db, *op);
    summary = tuner.run(req, [&](const TuneEvent& e) {
      if (progress.is_none()) return;
      nb::gil_scoped_acquire gil;
      if (raised) return;
      try {
        progress(event_dict(e));
      } catch (nb::python_error& err) {
        raised.emplace(std::move(err));
      }
    });
  }
  if (raised) throw std::move(*raised);
  TuneSummary s = unwrap(std::move(*summary));
  nlohmann::json j = {{"device", device.device->info().name},
                      {"device_selector", device.device->info().selector},
                      {"problem", problem.key()},
                      {"database", f.db}};
  j.update(to_json(s, op->flops(problem)));
  return json_to_python(j);
}

struct SweepFields {
  std::string plan, db, shard = "1/1";
  std::vector<std::string> template_dirs, worker;  ///< worker: empty runs candidates in this process
  bool binary_cache = true;
  std::string cache_dir;  ///< "": BinaryCache::default_dir()
};

/// A serial sweep of one shard of a plan, as `kforge sweep --json` reports
/// it (docs/sweep.md); the GIL is held only around `progress`.
nb::object run_sweep(PyDevice& device, const SweepFields& f, nb::object progress) {
  TemplateCatalog catalog = unwrap(TemplateCatalog::builtin());  // first: it registers declared operators
  for (const auto& dir : f.template_dirs) unwrap(catalog.add_dir(dir));
  const SweepPlan plan = unwrap(load_sweep_plan(f.plan));
  const SweepShard shard = unwrap(parse_shard(f.shard));
  const std::vector<SweepTask> tasks = shard_tasks(plan, shard);
  SerialSweepOptions options;
  options.runner.in_process = f.worker.empty();
  options.runner.worker_command = f.worker;
  options.runner.no_cache = !f.binary_cache;
  options.runner.cache_dir = f.cache_dir;
  options.has_user_templates = !f.template_dirs.empty();
  options.command_line = "python: kforge.sweep(" + f.plan + ")";
  // Each callback takes the GIL only where there is a `progress` to call;
  // a sweep without one never waits on the interpreter.
  std::optional<nb::python_error> raised;
  const auto send = [&](const auto& make_event) {
    nb::gil_scoped_acquire gil;
    if (raised) return;
    try {
      progress(make_event());
    } catch (nb::python_error& err) {
      raised.emplace(std::move(err));
    }
  };
  const auto remark = [](const char* kind, const std::string& note) {
    nb::dict d;
    d["kind"] = kind;
    d["note"] = note;
    return d;
  };
  SerialSweepCallbacks callbacks;
  if (!progress.is_none()) {
    callbacks.task_started = [&](std::size_t position, std::size_t count, const SweepTask& t) {
      send([&] {
        nb::dict d = remark("task", t.key);
        d["done"] = position - 1;
        d["total"] = count;
        return d;
      });
    };
    callbacks.on_event = [&](const TuneEvent& e) { send([&] { return event_dict(e); }); };
    callbacks.note = [&](const std::string& line) { send([&] { return remark("note", line); }); };
  }
  std::optional<Result<std::vector<TaskReport>>> reports;
  const auto t0 = std::chrono::steady_clock::now();
  {
    nb::gil_scoped_release release;
    reports = run_serial_sweep(*device.device, f.db, plan, tasks, catalog, options, callbacks);
  }
  if (raised) throw std::move(*raised);
  const std::vector<TaskReport> done = unwrap(std::move(*reports));
  nlohmann::json j = {{"plan", plan.file},
                      {"name", plan.name},
                      {"shard", {{"index", shard.index}, {"count", shard.count}}},
                      {"device", device.device->info().name},
                      {"device_selector", device.device->info().selector},
                      {"database", f.db},
                      {"time_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                      {"tasks", nlohmann::json::array()}};
  for (const auto& r : done) j["tasks"].push_back(report_json(r));
  return json_to_python(j);
}

}  // namespace

void bind_tune(nb::module_& m) {
  m.def(
      "_tune",
      [](PyDevice& device, ProblemFields pf, TuneFields f, nb::object progress) {
        return run_tune(device, pf, f, std::move(progress));
      },
      nb::arg("device"), nb::arg("problem"), nb::arg("fields"), nb::arg("progress").none(),
      "Internal: kforge.tune() fills the arguments.");
  nb::class_<ProblemFields>(m, "_ProblemFields")
      .def(nb::init<>())
      .def_rw("op", &ProblemFields::op)
      .def_rw("dims", &ProblemFields::dims)
      .def_rw("dtype", &ProblemFields::dtype)
      .def_rw("layout", &ProblemFields::layout)
      .def_rw("epilogue", &ProblemFields::epilogue)
      .def_rw("attrs", &ProblemFields::attrs);
  nb::class_<TuneFields>(m, "_TuneFields")
      .def(nb::init<>())
      .def_rw("db", &TuneFields::db)
      .def_rw("strategy", &TuneFields::strategy)
      .def_rw("max_evals", &TuneFields::max_evals)
      .def_rw("time_budget_s", &TuneFields::time_budget_s)
      .def_rw("no_improvement", &TuneFields::no_improvement)
      .def_rw("seed", &TuneFields::seed)
      .def_rw("warm_start", &TuneFields::warm_start)
      .def_rw("template_name", &TuneFields::template_name)
      .def_rw("config", &TuneFields::config)
      .def_rw("library", &TuneFields::library)
      .def_rw("template_dirs", &TuneFields::template_dirs)
      .def_rw("worker", &TuneFields::worker)
      .def_rw("binary_cache", &TuneFields::binary_cache)
      .def_rw("cache_dir", &TuneFields::cache_dir);
  m.def(
      "_sweep",
      [](PyDevice& device, SweepFields f, nb::object progress) { return run_sweep(device, f, std::move(progress)); },
      nb::arg("device"), nb::arg("fields"), nb::arg("progress").none(), "Internal: kforge.sweep() fills the arguments.");
  nb::class_<SweepFields>(m, "_SweepFields")
      .def(nb::init<>())
      .def_rw("plan", &SweepFields::plan)
      .def_rw("db", &SweepFields::db)
      .def_rw("shard", &SweepFields::shard)
      .def_rw("template_dirs", &SweepFields::template_dirs)
      .def_rw("worker", &SweepFields::worker)
      .def_rw("binary_cache", &SweepFields::binary_cache)
      .def_rw("cache_dir", &SweepFields::cache_dir);
  m.def(
      "_run_online_job",
      [](const std::string& job, const std::vector<std::string>& worker) {
        nb::gil_scoped_release release;
        return run_online_job(job, worker);
      },
      nb::arg("job"), nb::arg("worker"), "Internal: an online tune's process (python -m kforge._online_tune JOB).");
  m.def(
      "_run_tuner_worker", [](int fd) { return run_tuner_worker(fd); },
      nb::call_guard<nb::gil_scoped_release>(),
      "Internal: the worker process's loop (python -m kforge._worker FD).");
}

}  // namespace kforge::python
