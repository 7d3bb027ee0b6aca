// The per-task steps of a sweep, serial or distributed.
#include "sweep/sweep_runner.hpp"

#include <chrono>
#include <sstream>

#include "core/bounded_json.hpp"
#include "generator/operator.hpp"
#include "templates/builtin_templates.hpp"
#include "tuner/profiling/winner_profiling.hpp"
#include "tuner/template_selection.hpp"

namespace kforge {

namespace {

std::string ms_text(double ms) {
  std::ostringstream s;
  s.precision(4);
  s << ms;
  return s.str();
}

}  // namespace

std::string_view state_name(TaskReport::State s) {
  switch (s) {
    case TaskReport::State::kRan:
      return "ran";
    case TaskReport::State::kSkipped:
      return "skipped";
    case TaskReport::State::kError:
      return "error";
  }
  return "error";
}

MeasurementProtocol protocol_for(const SweepBudget& b) {
  MeasurementProtocol p;
  p.min_reps = b.min_reps;
  p.max_reps = std::max(b.max_reps, b.min_reps);
  return p;
}

Result<std::vector<const TemplateSource*>> task_templates(const SweepPlan& plan, const SweepTask& t,
                                                          const TemplateCatalog& catalog,
                                                          const std::string& backend, bool has_user_templates) {
  const auto all = select_templates(catalog, t.problem.op, backend, "", has_user_templates);
  std::vector<const TemplateSource*> out;
  bool dtype_ok = false;
  for (const auto* tpl : all) {
    dtype_ok = dtype_ok || tpl->manifest.supports(t.problem.dtype);
    if (tpl->manifest.supports(t.problem.dtype) && tpl->manifest.supports(t.problem.layout))
      out.push_back(tpl);
  }
  if (out.empty()) {
    const std::string dtype(dtype_name(t.problem.dtype));
    if (all.empty()) {
      return Error::bad_input(plan.file + ": " + t.entry + ".op: no " + t.problem.op + " template targets " +
                              backend);
    }
    if (!dtype_ok) {
      return Error::bad_input(plan.file + ": " + t.dtype_path + ": no " + t.problem.op + " template for " +
                              backend + " takes dtype \"" + dtype + "\"");
    }
    return Error::bad_input(plan.file + ": " + t.layout_path + ": no " + t.problem.op + " template for " +
                            backend + " takes layout \"" + t.problem.layout.name() + "\" with dtype \"" + dtype +
                            "\"");
  }
  return out;
}

Result<SweepHistory> SweepHistory::read(Database& db) {
  SweepHistory h;
  KF_TRY_ASSIGN(sweeps, db.sweeps());
  h.sweeps_ = std::move(sweeps);
  KF_TRY_ASSIGN(templates, db.templates());
  for (const auto& rec : templates) h.versions_.insert({rec.name, rec.hash});
  return h;
}

std::int64_t SweepHistory::finished_by(const SweepTask& t, const std::string& device_key,
                                       const std::vector<const TemplateSource*>& templates,
                                       const std::string& backend) const {
  const std::string_view prelude = prelude_text(backend);
  for (const auto* tpl : templates) {
    if (!versions_.count({tpl->manifest.name, tpl->hash(prelude)})) return 0;
  }
  const nlohmann::json protocol_json = protocol_for(t.budget).to_json();
  for (auto it = sweeps_.rbegin(); it != sweeps_.rend(); ++it) {
    if (it->finished_at.empty()) continue;
    const auto settings_parsed = parse_json_bounded(it->settings_json, "sweeps.settings_json");
    const auto device_parsed = parse_json_bounded(it->device_json, "sweeps.device_json");
    if (!settings_parsed.ok() || !device_parsed.ok())
      continue;  // a row this version cannot read finished nothing
    const nlohmann::json& settings = settings_parsed.value();
    const nlohmann::json& device = device_parsed.value();
    if (!settings.is_object() || !device.is_object() || settings.contains("only_config")) continue;
    if (device.value("hardware_key", "") != device_key) continue;
    const auto& b = t.budget;
    if (settings.value("problem", "") == t.key && settings.value("strategy", "") == b.strategy_to_run() &&
        settings.value("max_evals", -1) == b.max_evals &&
        settings.value("no_improvement", -1) == b.no_improvement &&
        settings.value("time_budget_s", -1.0) == b.time_budget_s &&
        settings.value("seed", std::uint64_t{0}) == b.seed &&
        settings.value("warm_start", 0) == b.warm_start &&
        settings.value("protocol", nlohmann::json()) == protocol_json) {
      return it->id;
    }
  }
  return 0;
}

Result<TaskReport> stored_report(Database& db, const SweepTask& t, const std::string& device_key,
                         const std::vector<const TemplateSource*>& templates, const std::string& backend) {
  TaskReport r;
  r.task = &t;
  r.state = TaskReport::State::kSkipped;
  std::set<std::pair<std::string, std::string>> current;
  for (const auto* tpl : templates) current.insert({tpl->manifest.name, tpl->hash(prelude_text(backend))});
  KF_TRY_ASSIGN(stored, db.results({device_key, t.key, std::nullopt}));
  for (const auto& rec : stored) {
    if (!current.count({rec.template_name, rec.template_hash})) continue;
    ++r.evaluated;
    if (rec.status != "ok") {
      ++r.failed[rec.status];
    } else if (!r.winner || rec.median_ms < r.winner->timing.median_ms) {
      r.winner = outcome_from_record(rec);
    }
  }
  return r;
}

namespace {

Result<TuneRequest> task_request(const SweepTask& t, const std::vector<const TemplateSource*>& templates,
                                 const RunnerOptions& runner, const std::string& command_line) {
  TuneRequest req;
  req.problem = t.problem;
  req.templates = templates;
  req.strategy = t.budget.strategy_to_run();
  req.strategy_defaulted = t.budget.strategy.empty();
  req.max_evals = t.budget.max_evals;
  req.time_budget_s = t.budget.time_budget_s;
  req.no_improvement = t.budget.no_improvement;
  req.seed = t.budget.seed;
  req.warm_start = t.budget.warm_start;
  req.protocol = protocol_for(t.budget);
  req.command_line = command_line;
  KF_TRY(apply_runner_options(runner, req));
  return req;
}

}  // namespace

TaskReport run_task(Device& device, Database& db, const SweepTask& t,
                    const std::vector<const TemplateSource*>& templates, const RunnerOptions& runner,
                    const std::function<void(const TuneEvent&)>& on_event,
                    const std::function<void(const std::string&)>& note, bool profile,
                    const std::string& command_line) {
  Tuner tuner(device, db, *find_operator(t.problem.op));
  const auto t0 = std::chrono::steady_clock::now();
  TaskReport r;
  r.task = &t;
  const auto request = task_request(t, templates, runner, command_line);
  if (!request.ok()) {
    r.state = TaskReport::State::kError;
    r.error = request.error().message;
    note(t.key + ": error: " + r.error);
    return r;
  }
  const TuneRequest& req = *request;
  auto summary = tuner.run(req, on_event);
  r.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!summary.ok()) {
    r.state = TaskReport::State::kError;
    r.error = summary.error().message;
    note(t.key + ": error: " + r.error);
    return r;
  }
  r.evaluated = summary->counts.evaluated + summary->counts.reused;
  r.evaluated_now = summary->counts.evaluated;
  for (const auto& oc : summary->outcomes) {
    if (oc.status != CandidateStatus::kOk) ++r.failed[std::string(status_name(oc.status))];
  }
  r.winner = summary->winner;
  r.sweep_id = summary->sweep_id;
  // A collector's failure is a row of its own, a database error a note.
  auto profiled = profile_winners(db, device, *find_operator(t.problem.op), req, *summary, profile);
  if (!profiled.ok()) note(t.key + ": counters not stored: " + profiled.error().message);
  r.time_s = summary->times.total_s;
  r.retiming_note = summary->retiming.note;
  if (!r.retiming_note.empty()) note(t.key + ": " + r.retiming_note);
  for (const FinalistTiming* f : within_noise_of_winner(*summary)) {
    CandidateOutcome tied = f->outcome;
    tied.timing = f->interleaved;  // the re-timing's median, as the winner's
    r.within_noise.push_back(std::move(tied));
    note(t.key + ": within noise of the winner: " + f->outcome.template_name + " " + f->outcome.config + " " +
         ms_text(f->interleaved.median_ms) + " ms");
  }
  return r;
}

std::string failures_text(const std::map<std::string, int>& failed) {
  std::string s;
  for (const auto& [status, n] : failed) s += (s.empty() ? "" : " ") + status + "=" + std::to_string(n);
  return s.empty() ? "none" : s;
}

nlohmann::json budget_json(const SweepBudget& b) {
  return {{"strategy", b.strategy_to_run()},
          {"max_evals", b.max_evals},
          {"time_budget_s", b.time_budget_s},
          {"no_improvement", b.no_improvement},
          {"seed", b.seed},
          {"min_reps", b.min_reps},
          {"max_reps", b.max_reps},
          {"warm_start", b.warm_start}};
}

namespace {

nlohmann::json outcome_json(const CandidateOutcome& o) {
  return {{"template", o.template_name}, {"config", o.config}, {"median_ms", o.timing.median_ms}};
}

CandidateOutcome outcome_of(const nlohmann::json& j) {
  CandidateOutcome o;
  o.template_name = j.at("template").get<std::string>();
  o.config = j.at("config").get<std::string>();
  o.timing.median_ms = j.at("median_ms").get<double>();
  return o;
}

}  // namespace

nlohmann::json report_json(const TaskReport& r) {
  nlohmann::json j = {{"index", r.task->index},
                      {"key", r.task->key},
                      {"state", state_name(r.state)},
                      {"evaluated", r.evaluated},
                      {"evaluated_now", r.evaluated_now},
                      {"failed", r.failed},
                      {"sweep_id", r.sweep_id},
                      {"time_s", r.time_s},
                      {"winner", nullptr}};
  if (r.winner) j["winner"] = outcome_json(*r.winner);
  if (r.state == TaskReport::State::kError) j["error"] = r.error;
  if (!r.retiming_note.empty()) j["retiming_note"] = r.retiming_note;
  j["within_noise_of_winner"] = nlohmann::json::array();
  for (const auto& o : r.within_noise) j["within_noise_of_winner"].push_back(outcome_json(o));
  if (r.rank >= 0) {
    j["rank"] = r.rank;
    j["device_key"] = r.device_key;
  }
  return j;
}

TaskReport report_from_json(const nlohmann::json& j, const SweepTask& t) {
  TaskReport r;
  r.task = &t;
  const std::string state = j.at("state").get<std::string>();
  r.state = state == "ran"       ? TaskReport::State::kRan
            : state == "skipped" ? TaskReport::State::kSkipped
                                 : TaskReport::State::kError;
  r.error = j.value("error", "");
  r.evaluated = j.at("evaluated").get<int>();
  r.evaluated_now = j.at("evaluated_now").get<int>();
  r.failed = j.at("failed").get<std::map<std::string, int>>();
  if (j.at("winner").is_object()) r.winner = outcome_of(j.at("winner"));
  r.sweep_id = j.at("sweep_id").get<std::int64_t>();
  r.time_s = j.at("time_s").get<double>();
  r.retiming_note = j.value("retiming_note", "");
  for (const auto& o : j.at("within_noise_of_winner")) r.within_noise.push_back(outcome_of(o));
  r.rank = j.value("rank", -1);
  r.device_key = j.value("device_key", "");
  return r;
}

}  // namespace kforge
