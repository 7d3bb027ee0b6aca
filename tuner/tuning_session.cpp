// The tuning loop's steps: prepare, plan a batch, evaluate a turn, store,
// re-time the finalists, finish.
#include "tuner/tuning_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

#include "core/hash.hpp"
#include "core/printable.hpp"
#include "core/utc_time.hpp"
#include "generator/backend_parameters.hpp"
#include "generator/search_space.hpp"
#include "runtime/catalog/can_implement.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "templates/builtin_templates.hpp"
#include "tuner/build_version.hpp"
#include "tuner/candidate_evaluator.hpp"
#include "tuner/measure/finalist_retiming.hpp"
#include "tuner/measure/problem_footprint.hpp"
#include "tuner/search/stop_condition.hpp"
#include "tuner/tuning_space.hpp"

namespace kforge {

namespace {

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

/// One row per configuration: its parameter values in name order.
SpaceFeatures space_features(const std::vector<Config>& space) {
  SpaceFeatures f;
  f.reserve(space.size());
  for (const Config& c : space) {
    std::vector<double> row;
    for (const auto& [name, value] : c.values) row.push_back(static_cast<double>(value));
    f.push_back(std::move(row));
  }
  return f;
}

/// Where programs are combined and a strategy has a fixed order (`base`,
/// `position` its inverse): numbers runs of `group_size` consecutive
/// positions of that order as groups, adds to `picks` the other members of
/// their groups that `allowed` accepts (what the strategy will propose within
/// the budget), and orders each group's members by position. A group's
/// program is then the same whatever the batch around it: the firsts moved
/// to the front, where the batch starts. Returns each pick with its group,
/// groups in first-seen order.
std::vector<std::pair<std::size_t, int>> in_whole_groups(const std::vector<std::size_t>& picks,
                                                         const std::vector<std::size_t>& base,
                                                         const std::vector<std::size_t>& position,
                                                         std::size_t group_size,
                                                         const std::function<bool(std::size_t)>& allowed) {
  std::vector<std::size_t> groups;  // first seen first
  for (std::size_t i : picks) {
    const std::size_t g = position[i] / group_size;
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  std::vector<std::pair<std::size_t, int>> out;
  for (std::size_t g : groups) {
    for (std::size_t p = g * group_size; p < std::min(base.size(), (g + 1) * group_size); ++p) {
      const bool picked = std::find(picks.begin(), picks.end(), base[p]) != picks.end();
      if (picked || allowed(base[p])) out.push_back({base[p], static_cast<int>(g)});
    }
  }
  return out;
}

/// What the run would reject anyway, checked before it writes anything, so
/// that a rejected request leaves no unfinished sweep row.
Status check_request(const TuneRequest& request, const Problem& problem) {
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), request.strategy) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return Error::bad_input("strategy: unknown strategy '" + printable(request.strategy) +
                            "' (known: " + known + ")");
  }
  const MeasurementProtocol& p = request.protocol;
  if (p.min_reps < 1) return Error::bad_input("min_reps: " + std::to_string(p.min_reps) + " is less than 1");
  if (p.max_reps < p.min_reps) {
    return Error::bad_input("max_reps: " + std::to_string(p.max_reps) + " is less than min_reps " +
                            std::to_string(p.min_reps));
  }
  if (!std::isfinite(p.cut_ratio) || p.cut_ratio < 0) {
    return Error::bad_input("cut_ratio: " + std::to_string(p.cut_ratio) + " is not a finite number >= 0");
  }
  if (request.only_config) {
    KF_TRY_ASSIGN(cfg, Config::parse(*request.only_config));
    for (const TemplateSource* tpl : request.templates) {
      const auto& m = tpl->manifest;
      if (m.supports(problem.dtype) && m.supports(problem.layout)) KF_TRY(m.check_declared(cfg));
    }
  }
  return ok_status();
}

/// The outcome of an evaluation of `config` of template `template_name`; takes its timing.
CandidateOutcome outcome_of(const std::string& template_name, const std::string& config, Evaluation& e) {
  CandidateOutcome o;
  o.template_name = template_name;
  o.config = config;
  o.status = e.status;
  o.reason = e.reason;
  o.timing = std::move(e.timing);
  o.error_norm = e.error_norm;
  o.error_ratio = e.error_ratio;
  o.compile_ms = e.compile_ms;
  return o;
}

/// A template's seed for its sampled space and its strategy.
std::uint64_t template_seed(std::uint64_t seed, const std::string& template_name) {
  return seed ^ Hasher().add(template_name).value();
}

}  // namespace

nlohmann::json strategy_record(const TuneRequest& request) {
  nlohmann::json seeds = nlohmann::json::object();
  for (const TemplateSource* t : request.templates) {
    seeds[t->manifest.name] = template_seed(request.seed, t->manifest.name);
  }
  return {{"strategy", request.strategy},
          {"strategy_chosen_by", request.strategy_defaulted ? "default for the budget" : "--strategy"},
          {"seed", request.seed},
          {"strategy_seeds", seeds}};
}

TuningSession::TuningSession(Device& device, Database& db, const Operator& op, const TuneRequest& request,
                             const std::function<void(const TuneEvent&)>& on_event)
    : device_(device), db_(db), op_(op), request_(request), on_event_(on_event) {}

Result<TuneSummary> TuningSession::run() {
  t0_ = Clock::now();
  KF_TRY(prepare());
  emit(TuneEvent::Kind::kStart, nullptr);
  KF_TRY(search());
  KF_TRY(retime());
  KF_TRY(finish());
  return std::move(summary_);
}

// ---- Preparing ----

Status TuningSession::prepare() {
  KF_TRY_ASSIGN(problem, op_.normalize(request_.problem));
  problem_ = std::move(problem);
  const DeviceInfo& info = device_.info();
  if (request_.templates.empty()) {
    return Error{ErrorCode::kUnsupported,
                 "no template implements " + problem_.op + " for backend " + info.backend,
                 {}};
  }
  KF_TRY(check_request(request_, problem_));
  // Before any row is written or any input generated: a problem that cannot
  // fit is refused with the numbers.
  KF_TRY(check_problem_fits(problem_footprint(op_, problem_), problem_, info, host_available_memory()));
  limits_ = info.limits();
  prelude_ = prelude_text(info.backend);
  KF_TRY(begin_sweep());
  KF_TRY(prepare_templates());
  plan_pipeline();
  return start_runner();
}

/// Identity rows first, then the sweep itself.
Status TuningSession::begin_sweep() {
  const DeviceInfo& info = device_.info();
  KF_TRY_ASSIGN(device_id, db_.put_device({0, info.hardware_key(), info.backend, info.vendor, info.name,
                                           info.arch, info.to_json().dump()}));
  device_id_ = device_id;
  KF_TRY_ASSIGN(problem_id,
                db_.put_problem({0, problem_.key(), problem_.op, nlohmann::json(problem_.dims).dump(),
                                 std::string(dtype_name(problem_.dtype)), problem_.layout.name()}));
  problem_id_ = problem_id;
  workload_seed_ = Hasher().add(problem_.key()).add(std::to_string(request_.seed)).value();
  SweepRecord sweep;
  sweep.tool_version = tool_version();
  sweep.git_revision = git_revision();
  sweep.command_line = request_.command_line;
  sweep.settings_json = sweep_settings().dump();
  sweep.device_json = info.to_json().dump();
  sweep.host = hostname();
  sweep.started_at = utc_now();
  KF_TRY_ASSIGN(sweep_id, db_.begin_sweep(sweep));
  sweep_id_ = sweep_id;
  summary_.sweep_id = sweep_id;
  return ok_status();
}

nlohmann::json TuningSession::sweep_settings() const {
  nlohmann::json settings = {{"strategy", request_.strategy},
                             {"max_evals", request_.max_evals},
                             {"no_improvement", request_.no_improvement},
                             {"time_budget_s", request_.time_budget_s},
                             {"seed", request_.seed},
                             {"workload_seed", workload_seed_},
                             {"protocol", request_.protocol.to_json()},
                             {"problem", problem_.key()}};
  settings.update(strategy_record(request_));
  // What a flush wrote depends on the device (runtime/device/cache_flush.hpp): kept
  // beside the protocol, which sweeps compare across devices' runs.
  if (request_.protocol.flush_cache) {
    const CacheFlush flush = device_.cache_flush();
    settings["cache_flush_bytes"] = flush.bytes;
    settings["cache_flush_method"] = std::string(flush_method_name(flush.method));
  }
  if (request_.only_config) settings["only_config"] = *request_.only_config;
  if (request_.warm_start > 0) settings["warm_start"] = request_.warm_start;
  if (!request_.online_mode.empty()) settings["online"] = request_.online_mode;
  return settings;
}

/// Per-template spaces and strategies.
Status TuningSession::prepare_templates() {
  std::vector<WarmStart> near;
  if (request_.warm_start > 0 && !request_.only_config) {
    KF_TRY_ASSIGN(found, nearby_winners(db_, device_.info().hardware_key(), problem_));
    near = std::move(found);
  }
  for (const TemplateSource* tpl : request_.templates) KF_TRY(prepare_template(*tpl, near));
  if (states_.empty()) {
    const DeviceInfo& info = device_.info();
    std::string why;
    for (const auto& [name, reason] : summary_.search.skipped_templates) why += "; " + reason;
    return Error{ErrorCode::kUnsupported,
                 "no template of " + problem_.op + " supports dtype " +
                     std::string(dtype_name(problem_.dtype)) + " and layout " + problem_.layout.name() +
                     " on " + info.backend + " " + info.arch + why,
                 {}};
  }
  if (request_.max_evals > 0)
    total_ = std::min<std::size_t>(total_, static_cast<std::size_t>(request_.max_evals));
  return ok_status();
}

Status TuningSession::prepare_template(const TemplateSource& tpl, const std::vector<WarmStart>& near) {
  const auto& m = tpl.manifest;
  // A template that cannot implement the problem here is never compiled
  // nor launched; one that merely lacks the dtype or layout is not named.
  KF_TRY_ASSIGN(fit, can_implement(m, op_, problem_, device_.info()));
  if (fit.gap == ImplementGap::kUnsupported) return ok_status();
  if (!fit.ok()) {
    summary_.search.skipped_templates.emplace_back(m.name, fit.reason);
    return ok_status();
  }
  // A library that does not load here is a note, not an error: the kernels are tuned without it.
  if (!tpl.library_unavailable.empty()) {
    summary_.search.skipped_templates.emplace_back(m.name, tpl.library_unavailable);
    return ok_status();
  }
  TemplateState st;
  st.tpl = &tpl;
  KF_TRY_ASSIGN(template_id, db_.put_template({0, m.name, m.op, tpl.hash(prelude_), tpl.manifest_text}));
  st.template_id = template_id;
  KF_TRY_ASSIGN(space, template_space(m, near));
  st.space = std::move(space);
  if (st.space.empty()) summary_.search.skipped_templates.emplace_back(m.name, why_no_configuration(m));
  KF_TRY_ASSIGN(strategy, template_strategy(m, st.space, near));
  st.strategy = std::move(strategy);
  KF_TRY(load_stored(st));
  total_ += st.space.size();
  states_.push_back(std::move(st));
  return ok_status();
}

std::string TuningSession::why_no_configuration(const TemplateManifest& m) const {
  // The default configuration's first failing envelope or constraint entry
  // says why: a problem its envelope excludes ("filter_width == fw") for
  // every declared value, most often.
  const SearchSpace space(m, op_, problem_, limits_);
  const Env env = space.env_for(m.default_config());
  std::string failed;
  for (const auto* list : {&m.envelope, &m.constraints}) {
    for (const FieldExpr& f : *list) {
      auto v = f.expr.eval(env);
      if (failed.empty() && (!v.ok() || *v == 0)) failed = f.field + " '" + f.expr.text() + "'";
    }
  }
  return "no configuration is valid for " + problem_.key() + " (the default fails " +
         (failed.empty() ? std::string("a check") : failed) + "): nothing to tune";
}

Result<std::vector<Config>> TuningSession::template_space(const TemplateManifest& m,
                                                          const std::vector<WarmStart>& near) {
  if (request_.only_config) {
    KF_TRY_ASSIGN(cfg, Config::parse(*request_.only_config));
    KF_TRY(m.check_declared(cfg));
    return std::vector<Config>{cfg};  // evaluated even if invalid here: the reason is recorded
  }
  // The default and the warm starts lead a sample of a large space.
  std::vector<Config> firsts{m.default_config()};
  for (const auto& w : near) {
    if (w.template_name != m.name) continue;
    if (auto cfg = Config::parse(w.config); cfg.ok()) firsts.push_back(std::move(cfg).value());
  }
  // Parameters that do not apply on this device's backend stay at their defaults.
  const TemplateManifest tuned = manifest_for_backend(m, device_.info().backend);
  const SearchSpace space(tuned, op_, problem_, limits_);
  KF_TRY_ASSIGN(tuning, make_tuning_space(space, request_.strategy, request_.max_evals, firsts,
                                          template_seed(request_.seed, m.name)));
  if (!tuning.whole) summary_.search.partial_spaces.emplace_back(m.name, tuning.note);
  return std::move(tuning.configs);
}

/// The strategy over `space`: the default first, then the warm starts.
Result<std::unique_ptr<Strategy>> TuningSession::template_strategy(const TemplateManifest& m,
                                                                   const std::vector<Config>& space,
                                                                   const std::vector<WarmStart>& near) {
  const auto it = std::find(space.begin(), space.end(), m.default_config());
  const std::size_t first = static_cast<std::size_t>(it - space.begin());
  std::vector<std::size_t> firsts = {first};
  for (auto& [index, w] : warm_starts(near, m.name, space, first, request_.warm_start)) {
    firsts.push_back(index);
    summary_.search.warm_starts.push_back(std::move(w));
  }
  return make_strategy(request_.strategy, space_features(space), firsts,
                       template_seed(request_.seed, m.name));
}

/// The results earlier runs stored for this template version: reused, not
/// evaluated again, except for --config, which reruns its configuration
/// (a failure's rerun line reproduces the failure).
Status TuningSession::load_stored(TemplateState& st) {
  if (request_.only_config) return ok_status();
  const auto& m = st.tpl->manifest;
  KF_TRY_ASSIGN(prior, db_.results({device_.info().hardware_key(), problem_.key(), m.name}));
  const std::string hash = st.tpl->hash(prelude_);
  for (auto& r : prior) {
    if (r.template_hash == hash) st.stored.emplace(r.config, r);
  }
  return ok_status();
}

void TuningSession::plan_pipeline() {
  // The compiler of the templates' kind: the device's for source templates,
  // none where every template is a library call or a Triton kernel.
  Compiler* compiler = nullptr;
  for (const auto& st : states_) {
    if (Compiler* c = template_kind(*st.tpl).compiler(device_)) compiler = c;
  }
  pipeline_ = plan_compile_pipeline(request_, device_.info().device_type, compiler, states_.size(),
                                    !request_.worker_command.empty());
  summary_.pipeline.compile_overlap = pipeline_.overlap;
  summary_.worker.code_generators = pipeline_.code_generators;
}

/// Where candidates run: a supervised worker process, or this one.
Status TuningSession::start_runner() {
  if (!request_.worker_command.empty()) {
    RunnerSetup setup{device_.info().selector,
                      problem_,
                      {},
                      workload_seed_,
                      request_.protocol,
                      request_.cache_dir,
                      pipeline_};
    for (const auto& st : states_) setup.template_origins.push_back(st.tpl->origin);
    setup.database = db_.path();
    auto w = std::make_unique<WorkerRunner>(std::move(setup), request_.worker_command, request_.timeouts);
    worker_ = w.get();
    runner_ = std::move(w);
    return ok_status();
  }
  std::optional<BinaryCache> cache;
  if (!request_.cache_dir.empty()) {
    KF_TRY_ASSIGN(c, BinaryCache::open(request_.cache_dir));
    cache.emplace(std::move(c));
  }
  std::vector<const TemplateSource*> tpls;
  for (const auto& st : states_) tpls.push_back(st.tpl);
  KF_TRY_ASSIGN(
      r, CandidateEvaluator::create(device_, op_, problem_, std::move(tpls), workload_seed_, request_.protocol,
                                    std::move(cache), pipeline_));
  r->set_rerun_database(db_.path());
  runner_ = std::move(r);
  return ok_status();
}

// ---- Searching ----

/// Round-robin over templates so that a budget is shared between them.
Status TuningSession::search() {
  const StopCondition stop =
      StopCondition::max_evaluations(static_cast<std::size_t>(std::max(0, request_.max_evals))) |
      StopCondition::time_budget(request_.time_budget_s) |
      StopCondition::no_improvement(static_cast<std::size_t>(std::max(0, request_.no_improvement)));
  std::size_t active = states_.size();
  for (std::size_t turn = 0; active > 0; ++turn) {
    if (auto why = stop.check({summary_.outcomes.size(), elapsed_s(), since_improvement_})) {
      summary_.stop_reason = *why;
      break;
    }
    TemplateState& st = states_[turn % states_.size()];
    if (st.exhausted) continue;
    const std::optional<std::size_t> next = propose(st);
    if (!next) {
      st.exhausted = true;
      --active;
      continue;
    }
    KF_TRY_ASSIGN(index, plan_batch(st, *next));
    KF_TRY_ASSIGN(outcome, evaluate_turn(st, index));
    record_turn(st, index, std::move(outcome));
  }
  summary_.winner = best_;
  return ok_status();
}

/// The template's next candidate: the next of a batch validated ahead, else the strategy's.
std::optional<std::size_t> TuningSession::propose(TemplateState& st) {
  if (st.queue.empty()) return st.strategy->next(st.history);
  const std::size_t next = st.queue.front();
  st.queue.pop_front();
  return next;
}

/// This candidate and the strategy's next ones are compiled ahead
/// (docs/measurement.md, "Compile pipeline"): without overlap in one batch
/// between timed runs, when this one is not compiled yet; with overlap the
/// window slides every turn, so the compile threads stay busy while the
/// device measures, and holds the adaptive strategies' guesses too (the
/// runner drops queued guesses that left the window). Returns the candidate
/// to evaluate now: `next`, or the batch's fastest when it is timed fastest
/// first.
Result<std::size_t> TuningSession::plan_batch(TemplateState& st, std::size_t next) {
  if (pipeline_.batch == 0 || st.stored.count(st.space[next].canonical_name()) ||
      (!pipeline_.overlap && st.requested.count(next))) {
    return next;
  }
  const std::vector<std::size_t> picks = batch_picks(st, next);
  const std::vector<CandidateRef> batch = batch_refs(st, in_groups(st, picks), picks);
  if (!batch.empty()) emit_phase(TuneEvent::Phase::kCompile, batch.size());
  auto pre = batch.empty() ? Result<PrecompileReport>(PrecompileReport{}) : runner_->precompile(batch);
  if (!pre.ok()) {
    pipeline_.batch = 0;  // compile each candidate on its own from here on
    const Error& why = pre.error();
    summary_.pipeline.compile_ahead_stopped = why.message + (why.context.empty() ? "" : ": " + why.context);
    return next;
  }
  compiled_in_batches_ += batch.size();
  summary_.times.compile_s += pre->wall_s;
  summary_.pipeline.generated_ahead += pre->generated;
  summary_.pipeline.compiled_combined += pre->combined;
  if (pipeline_.validate_ahead && !st.strategy->base_order().empty()) return time_fastest_first(st, next, batch);
  return next;
}

/// `next` and what the strategy proposes after it, as many as the batch and the budget hold.
std::vector<std::size_t> TuningSession::batch_picks(TemplateState& st, std::size_t next) {
  std::size_t room = pipeline_.batch;
  if (request_.max_evals > 0) {
    room =
        std::min<std::size_t>(room, static_cast<std::size_t>(request_.max_evals) - summary_.outcomes.size());
  }
  std::vector<std::size_t> picks{next};
  const std::size_t more = room > 0 ? room - 1 : 0;
  std::vector<std::size_t> ahead = pipeline_.overlap ? st.strategy->likely_next(more) : st.strategy->upcoming(more);
  // Between timed runs, PoCL's code generators build a batch in parallel:
  // an adaptive strategy's batch of one leaves all but one idle, so they
  // take its likeliest guesses meanwhile (never on a turn whose candidate
  // is compiled already, which would make the device wait for guesses).
  // Once a generator is lost (a crash or a hang) no more guesses go out,
  // so a faulty configuration the strategy may never propose costs once.
  if (!pipeline_.overlap && ahead.empty() && pipeline_.code_generators > 1 && worker_ && worker_->generators_lost() == 0) {
    ahead = st.strategy->likely_next(std::min(more, static_cast<std::size_t>(pipeline_.code_generators - 1)));
  }
  for (std::size_t i : ahead) {
    picks.push_back(i);
    st.guessed.insert(i);
  }
  return picks;
}

/// Each pick with its program group (-1: none). Where programs are combined
/// for a fixed order: whole groups of that order, completed from what the
/// strategy will propose within the budget (never a compile the run
/// wastes): without an evaluation budget it proposes every configuration.
std::vector<std::pair<std::size_t, int>> TuningSession::in_groups(
    TemplateState& st, const std::vector<std::size_t>& picks) const {
  const auto& base = st.strategy->base_order();
  if (!pipeline_.combine || base.empty()) {
    std::vector<std::pair<std::size_t, int>> out;
    for (std::size_t i : picks) out.push_back({i, -1});
    return out;
  }
  if (st.position.size() != st.space.size()) {
    st.position.assign(st.space.size(), 0);
    for (std::size_t p = 0; p < base.size(); ++p) st.position[base[p]] = p;
  }
  std::set<std::size_t> coming;
  if (request_.max_evals > 0) {
    const std::size_t left = static_cast<std::size_t>(request_.max_evals) - summary_.outcomes.size();
    for (std::size_t i : st.strategy->upcoming(left > 0 ? left - 1 : 0)) coming.insert(i);
  }
  return in_whole_groups(picks, base, st.position, pipeline_.per_thread,
                         [&](std::size_t i) { return request_.max_evals <= 0 || coming.count(i) > 0; });
}

/// The batch to compile: the grouped picks not sent before (with overlap,
/// every pick: the window slides), and stored members of a group built
/// only to keep its program whole.
std::vector<CandidateRef> TuningSession::batch_refs(TemplateState& st,
                                                    const std::vector<std::pair<std::size_t, int>>& grouped,
                                                    const std::vector<std::size_t>& picks) const {
  const std::string& template_name = st.tpl->manifest.name;
  std::vector<CandidateRef> batch;
  for (const auto& [i, group] : grouped) {
    const std::string n = st.space[i].canonical_name();
    if (auto s = st.stored.find(n); s != st.stored.end()) {
      // Stored by an earlier run: in its group's program all the same,
      // so that the program is that run's, where its result shows that
      // it compiled (a crash or a timeout may have been the compiler's).
      const auto status = parse_status(s->second.status);
      const bool compiled = status == CandidateStatus::kOk || status == CandidateStatus::kWrongResult;
      if (group >= 0 && compiled) batch.push_back({template_name, n, group, true});
      continue;
    }
    if (!st.requested.insert(i).second && !pipeline_.overlap) continue;
    if (std::find(picks.begin(), picks.end(), i) == picks.end()) st.guessed.insert(i);  // a group's rest
    batch.push_back({template_name, n, group});
  }
  return batch;
}

/// Validates the strategy's proposals from `first` on, as long as `batch`
/// holds them, queues them failed first (their outcomes are known), then
/// fastest untimed launch first, and returns the first of that queue.
Result<std::size_t> TuningSession::time_fastest_first(TemplateState& st, std::size_t first,
                                                      const std::vector<CandidateRef>& batch) {
  std::set<std::string> in_batch;
  for (const CandidateRef& c : batch) {
    if (!c.build_only && c.template_name == st.tpl->manifest.name) in_batch.insert(c.config);
  }
  if (!in_batch.count(st.space[first].canonical_name())) return first;
  std::vector<std::size_t> run{first};
  for (std::size_t i : st.strategy->upcoming(batch.size())) {
    if (!in_batch.count(st.space[i].canonical_name())) break;
    run.push_back(i);
  }
  std::vector<std::size_t> failed;
  std::vector<std::pair<double, std::size_t>> passed;
  for (std::size_t k = 0; k < run.size(); ++k) {
    if (k > 0) (void)st.strategy->next(st.history);  // a fixed order: run[k]
    KF_TRY_ASSIGN(v, runner_->validate(st.tpl->manifest.name, st.space[run[k]]));
    summary_.times.compile_s += v.compile_s;
    summary_.times.validate_s += v.validate_s;
    ++summary_.pipeline.validated_ahead;
    if (v.status != CandidateStatus::kOk) {
      failed.push_back(run[k]);
      st.failed_ahead[run[k]] = std::move(v);
    } else {
      passed.push_back(
          {v.untimed_ms.empty() ? std::numeric_limits<double>::infinity() : v.untimed_ms.front(), run[k]});
    }
  }
  std::stable_sort(passed.begin(), passed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::deque<std::size_t> order(failed.begin(), failed.end());
  for (const auto& [ms, i] : passed) order.push_back(i);
  for (std::size_t i : st.queue) order.push_back(i);
  st.queue = std::move(order);
  const std::size_t now = st.queue.front();
  st.queue.pop_front();
  return now;
}

/// The candidate's outcome: stored by an earlier run (reused), or evaluated
/// now and stored.
Result<CandidateOutcome> TuningSession::evaluate_turn(TemplateState& st, std::size_t index) {
  const auto& m = st.tpl->manifest;
  const std::string name = st.space[index].canonical_name();
  if (auto s = st.stored.find(name); s != st.stored.end()) {
    CandidateOutcome o = outcome_from_record(s->second);
    o.template_name = m.name;
    ++summary_.counts.reused;
    return o;
  }
  // The default is the baseline of the reported speedup: timed in full,
  // never cut against a best found before it (as it was when it always
  // came first, before batches were timed fastest first).
  const double cut_against = best_ && !is_default(st, index) ? best_->timing.median_ms : 0.0;
  KF_TRY_ASSIGN(e, evaluation_of(st, index, cut_against));
  CandidateOutcome o = outcome_of(m.name, name, e);
  add_phase_times(e);
  if (e.cache_hit) ++summary_.pipeline.cache_hits;
  if (e.compiled_ahead) ++summary_.pipeline.compiled_ahead;
  if (e.compiled_alone) ++summary_.pipeline.compiled_alone;
  if (st.guessed.count(index)) ++summary_.pipeline.guessed_ahead;
  KF_TRY(store_result(st, o, e));
  ++summary_.counts.evaluated;
  return o;
}

/// What the runner reports for the candidate: its validation's outcome when
/// that ended it ahead, else its evaluation.
Result<Evaluation> TuningSession::evaluation_of(TemplateState& st, std::size_t index, double cut_against) {
  const std::string& template_name = st.tpl->manifest.name;
  const Config& cfg = st.space[index];
  Evaluation e;
  if (auto ended = st.failed_ahead.find(index); ended != st.failed_ahead.end()) {
    e = std::move(ended->second);  // its phase times were counted when it was validated
    st.failed_ahead.erase(ended);
    e.compile_s = e.validate_s = e.measure_s = 0;
  } else {
    KF_TRY_ASSIGN(evaluated, runner_->evaluate(template_name, cfg, cut_against));
    e = std::move(evaluated);
  }
  // With compiles running ahead in the same worker, the worker's end
  // during this candidate may be another one's compile (a compiler crash
  // or hang): compiling ahead ends for the run, and this candidate is
  // evaluated again alone, so it answers only for what it does itself.
  if (worker_ && pipeline_.overlap && pipeline_.batch > 0 &&
      (e.status == CandidateStatus::kCrash || e.status == CandidateStatus::kTimeout)) {
    pipeline_.batch = 0;
    summary_.pipeline.compile_ahead_stopped = e.reason;
    add_phase_times(e);
    KF_TRY_ASSIGN(again, runner_->evaluate(template_name, cfg, cut_against));
    if (again.status != CandidateStatus::kOk)
      again.reason += "; also when evaluated alone, after: " + e.reason;
    e = std::move(again);
  }
  return e;
}

/// Commits the evaluated candidate's result as it finishes, so a killed
/// sweep resumes where it stopped.
Status TuningSession::store_result(const TemplateState& st, const CandidateOutcome& o, Evaluation& e) {
  ResultRecord rec = record_from_outcome(o, std::move(e.resources));
  rec.sweep_id = sweep_id_;
  rec.device_id = device_id_;
  rec.template_id = st.template_id;
  rec.problem_id = problem_id_;
  rec.compile_log = std::move(e.compile_log);
  rec.created_at = utc_now();
  if (request_.only_config) return db_.replace_result(rec);
  KF_TRY_ASSIGN(inserted, db_.add_result(rec));
  (void)inserted;
  return ok_status();
}

/// Counts the turn's outcome, tells the strategy, and reports it.
void TuningSession::record_turn(TemplateState& st, std::size_t index, CandidateOutcome o) {
  ++since_improvement_;
  if (o.status == CandidateStatus::kValidated) {
    ++summary_.counts.validated;
  } else if (o.status != CandidateStatus::kOk) {
    ++summary_.counts.failed;
    ++failures_[std::string(status_name(o.status))];
  } else if (!best_ || o.timing.median_ms < best_->timing.median_ms) {
    best_ = o;
    since_improvement_ = 0;
  }
  st.history.push_back({index, o.status == CandidateStatus::kOk, o.timing.median_ms});
  if (is_default(st, index)) summary_.default_result = o;
  summary_.outcomes.push_back(std::move(o));
  if (first_done_s_ == 0) first_done_s_ = elapsed_s();
  emit(TuneEvent::Kind::kCandidate, &summary_.outcomes.back());
}

/// Whether `index` is the primary template's default configuration.
bool TuningSession::is_default(const TemplateState& st, std::size_t index) const {
  return states_.front().tpl == st.tpl &&
         st.space[index].canonical_name() == st.tpl->manifest.default_config().canonical_name();
}

void TuningSession::add_phase_times(const Evaluation& e) {
  summary_.times.compile_s += e.compile_s;
  summary_.times.validate_s += e.validate_s;
  summary_.times.measure_s += e.measure_s;
}

// ---- Deciding the winner, closing the sweep ----

/// Re-times the finalists interleaved when this run evaluated anything;
/// their timings replace the stored ones and decide the winner.
Status TuningSession::retime() {
  if (summary_.counts.evaluated == 0 || !device_.times_kernels()) return ok_status();
  const auto start = Clock::now();
  emit_phase(TuneEvent::Phase::kRetime,
             static_cast<std::size_t>(std::max(0, request_.protocol.max_finalists)));
  KF_TRY(retime_finalists(*runner_, request_.protocol, summary_,
                          [this](const CandidateOutcome& o, const TimingStats& t, int retiming) {
                            return store_retiming(o, t, retiming);
                          }));
  summary_.times.finalists_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (auto note = best_ ? leader_change(summary_, *best_) : std::nullopt; note && on_event_) {
    TuneEvent e = event(TuneEvent::Kind::kLeaderChanged, nullptr);
    e.best = &*summary_.winner;
    e.replaced = &*best_;
    e.note = *note;
    on_event_(e);
  }
  return ok_status();
}

Status TuningSession::store_retiming(const CandidateOutcome& o, const TimingStats& t, int retiming) {
  CandidateOutcome retimed = o;
  retimed.timing = t;
  ResultRecord rec = record_from_outcome(retimed);  // no resources: its clocks replace the search's
  for (const auto& st : states_) {
    if (st.tpl->manifest.name == o.template_name) rec.template_id = st.template_id;
  }
  rec.device_id = device_id_;
  rec.problem_id = problem_id_;
  rec.reason = "finalist re-timed interleaved (" + std::to_string(t.count) + " rounds" +
               (t.stop == TimingStop::kRaced ? ", then dropped: slower than the leader in every round" : "") + ")" +
               (retiming > 1 ? ", re-timing " + std::to_string(retiming) : std::string()) +
               "; search median " + std::to_string(o.timing.median_ms) + " ms";
  if (const std::string n = t.clocks.note(); !n.empty()) rec.reason += "; " + n;
  return db_.replace_timing(rec);
}

Status TuningSession::finish() {
  if (worker_) {
    summary_.worker.restarts = worker_->restarts();
    summary_.times.setup_s = worker_->setup_seconds();
    summary_.worker.references_reused = worker_->references_reused();
    summary_.worker.generators_lost = worker_->generators_lost();
    summary_.worker.generators_lost_running = worker_->generators_lost_running();
    summary_.worker.shares_rebuilt = worker_->shares_rebuilt();
  }
  // A run whose candidates were all stored before writes no result, so the
  // winner is chosen again here: a tampered row never keeps the slot.
  for (const auto& st : states_) KF_TRY(db_.refresh_winner(device_id_, st.template_id, problem_id_));
  KF_TRY(db_.finish_sweep(sweep_id_, utc_now()));
  summary_.times.total_s = elapsed_s();
  emit(TuneEvent::Kind::kDone, nullptr);
  return ok_status();
}

// ---- Events ----

TuneEvent TuningSession::event(TuneEvent::Kind kind, const CandidateOutcome* o) const {
  TuneEvent e;
  e.kind = kind;
  e.done = summary_.outcomes.size();
  e.total = total_;
  e.outcome = o;
  e.best = best_ ? &*best_ : nullptr;
  e.failures = failures_;
  e.elapsed_s = elapsed_s();
  e.first_done_s = first_done_s_;
  e.compiled = compiled_in_batches_;
  return e;
}

void TuningSession::emit(TuneEvent::Kind kind, const CandidateOutcome* o) const {
  if (on_event_) on_event_(event(kind, o));
}

void TuningSession::emit_phase(TuneEvent::Phase phase, std::size_t batch) const {
  if (!on_event_) return;
  TuneEvent e = event(TuneEvent::Kind::kPhase, nullptr);
  e.phase = phase;
  e.batch = batch;
  on_event_(e);
}

double TuningSession::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - t0_).count();
}

}  // namespace kforge
