// The tuning loop: enumerate, pick, compile, validate, time, commit.
#include "tuner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "can_implement.hpp"
#include "bounded_json.hpp"
#include "build_version.hpp"
#include "builtin_templates.hpp"
#include "finalist_retiming.hpp"
#include "hash.hpp"
#include "instance.hpp"
#include "problem_footprint.hpp"
#include "search_space.hpp"
#include "stop_condition.hpp"
#include "strategy.hpp"
#include "in_process_runner.hpp"
#include "printable.hpp"
#include "tuning_space.hpp"

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Candidates for warm starts (TuneRequest::warm_start): the winners stored
/// on this device for other problems of `problem`'s family, every template's,
/// nearest first (ties by problem key). One query for the whole run.
Result<std::vector<WarmStart>> nearby_winners(Database& db, const std::string& device_key, const Problem& problem) {
  Database::WinnerFilter f;
  f.device_key = device_key;
  f.op = problem.op;
  f.dtype = std::string(dtype_name(problem.dtype));
  f.layout = problem.layout.name();
  KF_TRY_ASSIGN(winners, db.winners(f));
  const std::string key = problem.key();
  const std::string family = problem_family(key);
  std::vector<WarmStart> near;
  for (const auto& w : winners) {
    if (w.problem_key == key || problem_family(w.problem_key) != family) continue;
    std::map<std::string, std::int64_t> dims;
    try {
      dims = parse_json_bounded(w.dims_json, "problems.dims_json").value().get<std::map<std::string, std::int64_t>>();
    } catch (const std::exception&) {
      continue;  // a row this version cannot read suggests nothing
    }
    const double d = dims_log2_distance(problem.dims, dims);
    if (std::isinf(d)) continue;
    near.push_back({w.template_name, w.config, w.problem_key, d});
  }
  std::sort(near.begin(), near.end(), [](const WarmStart& a, const WarmStart& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.from_problem < b.from_problem;
  });
  return near;
}

/// The warm starts for one template's `space`: of `near` (nearby_winners),
/// those of template `template_name` inside `space` other than `first` (the
/// default, proposed anyway), each configuration once, at most `count`.
std::vector<std::pair<std::size_t, WarmStart>> warm_starts(const std::vector<WarmStart>& near,
                                                           const std::string& template_name,
                                                           const std::vector<Config>& space, std::size_t first,
                                                           int count) {
  std::vector<std::pair<std::size_t, WarmStart>> out;
  for (const auto& w : near) {
    if (static_cast<int>(out.size()) >= count) break;
    if (w.template_name != template_name) continue;
    auto cfg = Config::parse(w.config);
    if (!cfg.ok()) continue;
    const auto it = std::find(space.begin(), space.end(), *cfg);
    if (it == space.end()) continue;
    const auto index = static_cast<std::size_t>(it - space.begin());
    if (index == first || std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.first == index; }))
      continue;
    out.emplace_back(index, w);
  }
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

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

/// Per-template state of a sweep.
struct TemplateState {
  const TemplateSource* tpl = nullptr;
  std::int64_t template_id = 0;
  std::vector<Config> space;
  std::unique_ptr<Strategy> strategy;
  std::vector<Observation> history;
  std::map<std::string, ResultRecord> stored;  ///< config -> stored result
  bool exhausted = false;
  std::set<std::size_t> requested;  ///< sent to be compiled ahead
  std::set<std::size_t> guessed;    ///< sent ahead of their turn (a strategy's upcoming or likely next)
  std::vector<std::size_t> position;  ///< each configuration's place in the strategy's base order
  /// Taken from the strategy with a batch validated ahead, in the order
  /// they are timed: fastest untimed launch first.
  std::deque<std::size_t> queue;
  /// Of those, the ones whose validation ended them: their outcomes.
  std::map<std::size_t, Evaluation> failed_ahead;
};

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

CandidateOutcome outcome_from_record(const ResultRecord& r) {
  CandidateOutcome o;
  o.template_name = r.template_name;
  o.config = r.config;
  o.status = parse_status(r.status).value_or(CandidateStatus::kLaunchError);
  o.reason = r.reason;
  o.timing.median_ms = r.median_ms;
  o.timing.p20_ms = r.p20_ms;
  o.timing.p80_ms = r.p80_ms;
  o.timing.min_ms = r.min_ms;
  o.timing.max_ms = r.max_ms;
  o.timing.count = r.count;
  o.error_norm = r.error_norm;
  o.error_ratio = r.error_ratio;
  o.compile_ms = r.compile_ms;
  o.reused = true;
  return o;
}

}  // namespace

std::string rerun_command(const Problem& p, const std::string& template_name, const std::string& config,
                          const std::string& template_dir, const std::string& db) {
  return "kforge tune" + (template_dir.empty() ? "" : " --template " + template_dir) + " --op " + p.op +
         (db.empty() ? "" : " --db " + db) + " --shape " + p.dims_string() + " --dtype " +
         std::string(dtype_name(p.dtype)) + " --layout " + p.layout.name() +
         (p.epilogue.plain() ? "" : " --epilogue " + p.epilogue.name()) +
         (p.attrs.empty() ? "" : " --attr " + p.attrs_string()) + " --only-template " + template_name +
         " --config " + config;
}

Tuner::Tuner(Device& device, Database& db, const Operator& op) : device_(device), db_(db), op_(op) {}

int code_generators(const TuneRequest& request, const CodeGeneration& generation, bool batches) {
  // A compiler that generates a kernel's machine code at its first launch
  // (PoCL, one program at a time per process) and caches it on disk for
  // every process gains from generating it ahead; others gain nothing.
  if (!batches || !generation.at_first_launch || !generation.cached_on_disk) return 0;
  const int threads = InProcessRunner::compile_threads(request.compile_threads);
  return threads > 1 ? threads : 0;
}

bool compile_overlaps(const TuneRequest& request, DeviceType device_type) {
  switch (request.compile_overlap) {
    case TuneRequest::CompileOverlap::kOn: return true;
    case TuneRequest::CompileOverlap::kOff: return false;
    case TuneRequest::CompileOverlap::kAuto: break;
  }
  return device_type != DeviceType::kCpu;
}

namespace {

/// What the run would reject anyway, checked before it writes anything, so
/// that a rejected request leaves no unfinished sweep row.
Status check_request(const TuneRequest& request, const Problem& problem) {
  const auto names = strategy_names();
  if (std::find(names.begin(), names.end(), request.strategy) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    return Error::bad_input("strategy: unknown strategy '" + printable(request.strategy) + "' (known: " + known + ")");
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

}  // namespace

Result<TuneSummary> Tuner::run(const TuneRequest& request,
                               const std::function<void(const TuneEvent&)>& on_event) {
  const auto t0 = Clock::now();
  KF_TRY_ASSIGN(problem, op_.normalize(request.problem));
  if (request.templates.empty()) {
    return Error{ErrorCode::kUnsupported,
                 "no template implements " + problem.op + " for backend " + device_.info().backend, {}};
  }
  KF_TRY(check_request(request, problem));
  const DeviceInfo& info = device_.info();
  // Before any row is written or any input generated: a problem that cannot
  // fit is refused with the numbers.
  KF_TRY(check_problem_fits(problem_footprint(op_, problem), problem, info, host_available_memory()));
  const DeviceLimits limits = info.limits();
  const std::string_view prelude = prelude_text(info.backend);

  // Identity rows first, then the sweep itself.
  KF_TRY_ASSIGN(device_id, db_.put_device({0, info.hardware_key(), info.backend, info.vendor,
                                           info.name, info.arch, info.to_json().dump()}));
  nlohmann::json dims_json(problem.dims);
  KF_TRY_ASSIGN(problem_id, db_.put_problem({0, problem.key(), problem.op, dims_json.dump(),
                                             std::string(dtype_name(problem.dtype)),
                                             problem.layout.name()}));
  const std::uint64_t seed = request.seed;
  const std::uint64_t workload_seed = Hasher().add(problem.key()).add(std::to_string(seed)).value();
  nlohmann::json settings = {{"strategy", request.strategy},
                             {"max_evals", request.max_evals},
                             {"no_improvement", request.no_improvement},
                             {"time_budget_s", request.time_budget_s},
                             {"seed", seed},
                             {"workload_seed", workload_seed},
                             {"protocol", request.protocol.to_json()},
                             {"problem", problem.key()}};
  // What a flush wrote depends on the device (runtime/cache_flush.hpp): kept
  // beside the protocol, which sweeps compare across devices' runs.
  if (request.protocol.flush_cache) {
    const CacheFlush flush = device_.cache_flush();
    settings["cache_flush_bytes"] = flush.bytes;
    settings["cache_flush_method"] = std::string(flush_method_name(flush.method));
  }
  if (request.only_config) settings["only_config"] = *request.only_config;
  if (request.warm_start > 0) settings["warm_start"] = request.warm_start;
  SweepRecord sweep;
  sweep.tool_version = tool_version();
  sweep.git_revision = git_revision();
  sweep.command_line = request.command_line;
  sweep.settings_json = settings.dump();
  sweep.device_json = info.to_json().dump();
  sweep.host = hostname();
  sweep.started_at = utc_now();
  KF_TRY_ASSIGN(sweep_id, db_.begin_sweep(sweep));

  // Per-template spaces and strategies.
  std::vector<TemplateState> states;
  std::vector<std::pair<std::string, std::string>> skipped;
  std::vector<std::pair<std::string, std::string>> summary_notes;  ///< spaces tuned in part
  std::vector<WarmStart> warm_started, near;
  if (request.warm_start > 0 && !request.only_config) {
    KF_TRY_ASSIGN(found, nearby_winners(db_, info.hardware_key(), problem));
    near = std::move(found);
  }
  std::size_t total = 0;
  for (const TemplateSource* tpl : request.templates) {
    const auto& m = tpl->manifest;
    // A template that cannot implement the problem here is never compiled
    // nor launched; one that merely lacks the dtype or layout is not named.
    KF_TRY_ASSIGN(fit, can_implement(m, op_, problem, info));
    if (fit.gap == ImplementGap::kUnsupported) continue;
    if (!fit.ok()) {
      skipped.emplace_back(m.name, fit.reason);
      continue;
    }
    TemplateState st;
    st.tpl = tpl;
    KF_TRY_ASSIGN(template_id, db_.put_template({0, m.name, m.op, tpl->hash(prelude), tpl->manifest_text}));
    st.template_id = template_id;
    SearchSpace space(m, op_, problem, limits);
    if (request.only_config) {
      KF_TRY_ASSIGN(cfg, Config::parse(*request.only_config));
      KF_TRY(m.check_declared(cfg));
      st.space.push_back(cfg);  // evaluated even if invalid here: the reason is recorded
    } else {
      // The default and the warm starts lead a sample of a large space.
      std::vector<Config> firsts{m.default_config()};
      for (const auto& w : near) {
        if (w.template_name != m.name) continue;
        if (auto cfg = Config::parse(w.config); cfg.ok()) firsts.push_back(std::move(cfg).value());
      }
      KF_TRY_ASSIGN(tuning, make_tuning_space(space, request.strategy, request.max_evals, firsts,
                                              seed ^ Hasher().add(m.name).value()));
      if (!tuning.whole) summary_notes.emplace_back(m.name, tuning.note);
      st.space = std::move(tuning.configs);
    }
    const Config def = m.default_config();
    auto it = std::find(st.space.begin(), st.space.end(), def);
    const std::size_t first = it == st.space.end() ? st.space.size() : static_cast<std::size_t>(it - st.space.begin());
    std::vector<std::size_t> firsts = {first};
    for (auto& [index, w] : warm_starts(near, m.name, st.space, first, request.warm_start)) {
      firsts.push_back(index);
      warm_started.push_back(std::move(w));
    }
    KF_TRY_ASSIGN(strategy, make_strategy(request.strategy, space_features(st.space), firsts,
                                          seed ^ Hasher().add(m.name).value()));
    st.strategy = std::move(strategy);
    KF_TRY_ASSIGN(prior, db_.results({info.hardware_key(), problem.key(), m.name}));
    const std::string hash = tpl->hash(prelude);
    for (auto& r : prior) {
      if (r.template_hash == hash) st.stored.emplace(r.config, r);
    }
    total += st.space.size();
    states.push_back(std::move(st));
  }
  if (states.empty()) {
    std::string why;
    for (const auto& [name, reason] : skipped) why += "; " + reason;
    return Error{ErrorCode::kUnsupported,
                 "no template of " + problem.op + " supports dtype " + std::string(dtype_name(problem.dtype)) +
                     " and layout " + problem.layout.name() + " on " + info.backend + " " + info.arch + why,
                 {}};
  }
  if (request.max_evals > 0) total = std::min<std::size_t>(total, static_cast<std::size_t>(request.max_evals));

  // Batches compiled ahead: twice the compile threads, so each batch keeps
  // them busy. Between timed runs, where the compiler combines programs
  // (PoCL), eight per thread: each thread's share is built as one program,
  // whose front end it then shares (docs/measurement.md, "Combined programs").
  const bool compiles_ahead = request.compile_threads >= 0;
  const bool overlap = compiles_ahead && compile_overlaps(request, info.device_type);
  const bool combining = !overlap && device_.compiler().combines_programs();
  const std::size_t per_thread = combining ? 8 : 2;
  std::size_t compile_ahead =
      compiles_ahead ? per_thread * static_cast<std::size_t>(InProcessRunner::compile_threads(request.compile_threads)) : 0;
  // Code generators serve the worker only (they are worker processes).
  const int generators =
      request.worker_command.empty()
          ? 0
          : code_generators(request, device_.compiler().code_generation(), compile_ahead > 0 && !overlap);

  // Where candidates run: a supervised worker process, or this one.
  std::unique_ptr<CandidateRunner> runner;
  WorkerRunner* worker = nullptr;
  if (!request.worker_command.empty()) {
    RunnerSetup setup{info.selector,    problem,           {}, workload_seed, request.protocol,
                      request.cache_dir, std::max(0, request.compile_threads), overlap};
    for (const auto& st : states) setup.template_origins.push_back(st.tpl->origin);
    setup.code_generators = generators;
    setup.database = db_.path();
    auto w = std::make_unique<WorkerRunner>(std::move(setup), request.worker_command, request.timeouts);
    worker = w.get();
    runner = std::move(w);
  } else {
    std::optional<BinaryCache> cache;
    if (!request.cache_dir.empty()) {
      KF_TRY_ASSIGN(c, BinaryCache::open(request.cache_dir));
      cache.emplace(std::move(c));
    }
    std::vector<const TemplateSource*> tpls;
    for (const auto& st : states) tpls.push_back(st.tpl);
    KF_TRY_ASSIGN(r, InProcessRunner::create(device_, op_, problem, std::move(tpls), workload_seed,
                                             request.protocol, std::move(cache),
                                             std::max(0, request.compile_threads), overlap));
    r->set_rerun_database(db_.path());
    runner = std::move(r);
  }

  TuneSummary summary;
  summary.sweep_id = sweep_id;
  summary.skipped_templates = skipped;
  summary.partial_spaces = summary_notes;
  summary.warm_starts = warm_started;
  summary.compile_overlap = overlap;
  summary.code_generators = generators;
  std::map<std::string, int> failures;
  std::optional<CandidateOutcome> best;
  double first_done_s = 0;
  std::size_t compiled_ahead = 0;
  auto event = [&](TuneEvent::Kind kind, const CandidateOutcome* o) {
    TuneEvent e;
    e.kind = kind;
    e.done = summary.outcomes.size();
    e.total = total;
    e.outcome = o;
    e.best = best ? &*best : nullptr;
    e.failures = failures;
    e.elapsed_s = seconds_since(t0);
    e.first_done_s = first_done_s;
    e.compiled = compiled_ahead;
    return e;
  };
  auto emit = [&](TuneEvent::Kind kind, const CandidateOutcome* o) {
    if (on_event) on_event(event(kind, o));
  };
  auto emit_phase = [&](TuneEvent::Phase phase, std::size_t batch) {
    if (!on_event) return;
    TuneEvent e = event(TuneEvent::Kind::kPhase, nullptr);
    e.phase = phase;
    e.batch = batch;
    on_event(e);
  };
  emit(TuneEvent::Kind::kStart, nullptr);

  // A fixed-order strategy's batch compiled between timed runs is validated
  // first and timed fastest first: its slow candidates are then cut against
  // its fastest instead of being timed in full while the best so far is a
  // slow one (docs/measurement.md, "Time the batch's fastest first").
  // Evaluation order changes nothing else such a strategy proposes, and the
  // set an evaluation budget evaluates stays the strategy's: a batch never
  // holds more than the budget leaves, so the whole run is evaluated, except
  // where templates share the budget turn by turn. Then how much of a run a
  // template's turns reach depends on the others, and its candidates are
  // timed in the strategy's order.
  const bool validate_ahead = request.fastest_first && compile_ahead > 0 && !overlap &&
                        (request.max_evals <= 0 || states.size() == 1);
  auto time_fastest_first = [&](TemplateState& st, std::size_t first,
                                const std::vector<CandidateRef>& batch) -> Result<std::size_t> {
    // The strategy's proposals from `first` on, as long as the batch holds them.
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
      KF_TRY_ASSIGN(v, runner->validate(st.tpl->manifest.name, st.space[run[k]]));
      summary.compile_s += v.compile_s;
      summary.validate_s += v.validate_s;
      ++summary.validated_ahead;
      if (v.status != CandidateStatus::kOk) {
        failed.push_back(run[k]);
        st.failed_ahead[run[k]] = std::move(v);
      } else {
        passed.push_back({v.untimed_ms.empty() ? std::numeric_limits<double>::infinity() : v.untimed_ms.front(),
                          run[k]});
      }
    }
    // Failed ones first (their outcomes are known), then fastest first.
    std::stable_sort(passed.begin(), passed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::deque<std::size_t> order(failed.begin(), failed.end());
    for (const auto& [ms, i] : passed) order.push_back(i);
    for (std::size_t i : st.queue) order.push_back(i);
    st.queue = std::move(order);
    const std::size_t now = st.queue.front();
    st.queue.pop_front();
    return now;
  };

  // Round-robin over templates so that a budget is shared between them.
  const StopCondition stop = StopCondition::max_evaluations(static_cast<std::size_t>(std::max(0, request.max_evals))) |
                             StopCondition::time_budget(request.time_budget_s) |
                             StopCondition::no_improvement(static_cast<std::size_t>(std::max(0, request.no_improvement)));
  std::size_t since_improvement = 0;
  std::size_t active = states.size();
  for (std::size_t turn = 0; active > 0; ++turn) {
    if (auto why = stop.check({summary.outcomes.size(), seconds_since(t0), since_improvement})) {
      summary.stop_reason = *why;
      break;
    }
    TemplateState& st = states[turn % states.size()];
    if (st.exhausted) continue;
    std::optional<std::size_t> next;
    if (!st.queue.empty()) {
      next = st.queue.front();
      st.queue.pop_front();
    } else {
      next = st.strategy->next(st.history);
    }
    if (!next) {
      st.exhausted = true;
      --active;
      continue;
    }
    std::string name = st.space[*next].canonical_name();
    const auto& m = st.tpl->manifest;
    // This candidate and the strategy's next ones are compiled ahead
    // (docs/measurement.md, "Compile pipeline"): without overlap in one batch
    // between timed runs, when this one is not compiled yet; with overlap the
    // window slides every turn, so the compile threads stay busy while the
    // device measures, and holds the adaptive strategies' guesses too (the
    // runner drops queued guesses that left the window).
    if (compile_ahead > 0 && !st.stored.count(name) && (overlap || !st.requested.count(*next))) {
      std::size_t room = compile_ahead;
      if (request.max_evals > 0) {
        room = std::min<std::size_t>(room, static_cast<std::size_t>(request.max_evals) - summary.outcomes.size());
      }
      std::vector<std::size_t> picks{*next};
      const std::size_t more = room > 0 ? room - 1 : 0;
      std::vector<std::size_t> ahead = overlap ? st.strategy->likely_next(more) : st.strategy->upcoming(more);
      // Between timed runs, PoCL's code generators build a batch in parallel:
      // an adaptive strategy's batch of one leaves all but one idle, so they
      // take its likeliest guesses meanwhile (never on a turn whose candidate
      // is compiled already, which would make the device wait for guesses).
      // Once a generator is lost (a crash or a hang) no more guesses go out,
      // so a faulty configuration the strategy may never propose costs once.
      if (!overlap && ahead.empty() && generators > 1 && worker && worker->generators_lost() == 0) {
        ahead = st.strategy->likely_next(std::min(more, static_cast<std::size_t>(generators - 1)));
      }
      for (std::size_t i : ahead) {
        picks.push_back(i);
        st.guessed.insert(i);
      }
      std::vector<std::pair<std::size_t, int>> grouped;
      if (combining && !st.strategy->base_order().empty()) {
        // Whole groups of the fixed order, completed from what the strategy
        // will propose within the budget (never a compile the run wastes):
        // without an evaluation budget it proposes every configuration.
        const auto& base = st.strategy->base_order();
        if (st.position.size() != st.space.size()) {
          st.position.assign(st.space.size(), 0);
          for (std::size_t p = 0; p < base.size(); ++p) st.position[base[p]] = p;
        }
        std::set<std::size_t> coming;
        if (request.max_evals > 0) {
          const std::size_t left = static_cast<std::size_t>(request.max_evals) - summary.outcomes.size();
          for (std::size_t i : st.strategy->upcoming(left > 0 ? left - 1 : 0)) coming.insert(i);
        }
        grouped = in_whole_groups(picks, base, st.position, per_thread,
                                  [&](std::size_t i) { return request.max_evals <= 0 || coming.count(i) > 0; });
      } else {
        for (std::size_t i : picks) grouped.push_back({i, -1});
      }
      std::vector<CandidateRef> batch;
      for (const auto& [i, group] : grouped) {
        const std::string n = st.space[i].canonical_name();
        if (auto s = st.stored.find(n); s != st.stored.end()) {
          // Stored by an earlier run: in its group's program all the same,
          // so that the program is that run's, where its result shows that
          // it compiled (a crash or a timeout may have been the compiler's).
          const auto status = parse_status(s->second.status);
          const bool compiled = status == CandidateStatus::kOk || status == CandidateStatus::kWrongResult;
          if (group >= 0 && compiled) batch.push_back({m.name, n, group, true});
          continue;
        }
        if (!st.requested.insert(i).second && !overlap) continue;
        if (std::find(picks.begin(), picks.end(), i) == picks.end()) st.guessed.insert(i);  // a group's rest
        batch.push_back({m.name, n, group});
      }
      if (!batch.empty()) emit_phase(TuneEvent::Phase::kCompile, batch.size());
      auto pre = batch.empty() ? Result<PrecompileReport>(PrecompileReport{}) : runner->precompile(batch);
      if (pre.ok()) {
        compiled_ahead += batch.size();
        summary.compile_s += pre->wall_s;
        summary.generated_ahead += pre->generated;
        summary.compiled_combined += pre->combined;
        if (validate_ahead && !st.strategy->base_order().empty()) {
          KF_TRY_ASSIGN(first, time_fastest_first(st, *next, batch));
          next = first;
          name = st.space[*next].canonical_name();
        }
      } else {
        compile_ahead = 0;  // compile each candidate on its own from here on
        const Error& why = pre.error();
        summary.compile_ahead_stopped = why.message + (why.context.empty() ? "" : ": " + why.context);
      }
    }

    const Config& cfg = st.space[*next];
    // The default is the baseline of the reported speedup: timed in full,
    // never cut against a best found before it (as it was when it always
    // came first, before batches were timed fastest first).
    const bool is_default = states.front().tpl == st.tpl && name == m.default_config().canonical_name();
    CandidateOutcome o;
    if (auto s = st.stored.find(name); s != st.stored.end()) {
      o = outcome_from_record(s->second);
      o.template_name = m.name;
      ++summary.reused;
    } else {
      o.template_name = m.name;
      o.config = name;
      ResultRecord rec;
      auto add_phase_times = [&](const Evaluation& ev) {
        summary.compile_s += ev.compile_s;
        summary.validate_s += ev.validate_s;
        summary.measure_s += ev.measure_s;
      };
      const double cut_against = best && !is_default ? best->timing.median_ms : 0.0;
      Evaluation e;
      if (auto ended = st.failed_ahead.find(*next); ended != st.failed_ahead.end()) {
        e = std::move(ended->second);  // its phase times were counted when it was validated
        st.failed_ahead.erase(ended);
        e.compile_s = e.validate_s = e.measure_s = 0;
      } else {
        KF_TRY_ASSIGN(evaluated, runner->evaluate(m.name, cfg, cut_against));
        e = std::move(evaluated);
      }
      // With compiles running ahead in the same worker, the worker's end
      // during this candidate may be another one's compile (a compiler crash
      // or hang): compiling ahead ends for the run, and this candidate is
      // evaluated again alone, so it answers only for what it does itself.
      if (worker && overlap && compile_ahead > 0 &&
          (e.status == CandidateStatus::kCrash || e.status == CandidateStatus::kTimeout)) {
        compile_ahead = 0;
        summary.compile_ahead_stopped = e.reason;
        add_phase_times(e);
        KF_TRY_ASSIGN(again, runner->evaluate(m.name, cfg, cut_against));
        if (again.status != CandidateStatus::kOk) again.reason += "; also when evaluated alone, after: " + e.reason;
        e = std::move(again);
      }
      o.status = e.status;
      o.reason = e.reason;
      o.timing = std::move(e.timing);
      o.error_norm = e.error_norm;
      o.error_ratio = e.error_ratio;
      o.compile_ms = e.compile_ms;
      add_phase_times(e);
      if (e.cache_hit) ++summary.cache_hits;
      if (e.compiled_ahead) ++summary.compiled_ahead;
      if (e.compiled_alone) ++summary.compiled_alone;
      if (st.guessed.count(*next)) ++summary.guessed_ahead;
      const std::string log = std::move(e.compile_log);
      const nlohmann::json resources = std::move(e.resources);
      rec.sweep_id = sweep_id;
      rec.device_id = device_id;
      rec.template_id = st.template_id;
      rec.problem_id = problem_id;
      rec.config = name;
      rec.status = std::string(status_name(o.status));
      rec.reason = o.reason;
      rec.median_ms = o.timing.median_ms;
      rec.p20_ms = o.timing.p20_ms;
      rec.p80_ms = o.timing.p80_ms;
      rec.min_ms = o.timing.min_ms;
      rec.max_ms = o.timing.max_ms;
      rec.count = o.timing.count;
      rec.samples_json = nlohmann::json(o.timing.samples_ms).dump();
      rec.error_norm = o.error_norm;
      rec.error_ratio = o.error_ratio;
      rec.compile_ms = o.compile_ms;
      rec.resources_json = resources_with_clocks(resources, o.timing).dump();
      rec.compile_log = log;
      rec.created_at = utc_now();
      KF_TRY_ASSIGN(inserted, db_.add_result(rec));
      (void)inserted;
      ++summary.evaluated;
    }
    ++since_improvement;
    if (o.status != CandidateStatus::kOk) {
      ++summary.failed;
      ++failures[std::string(status_name(o.status))];
    } else if (!best || o.timing.median_ms < best->timing.median_ms) {
      best = o;
      since_improvement = 0;
    }
    st.history.push_back({*next, o.status == CandidateStatus::kOk, o.timing.median_ms});
    if (is_default) {
      summary.default_result = o;
    }
    summary.outcomes.push_back(std::move(o));
    if (first_done_s == 0) first_done_s = seconds_since(t0);
    emit(TuneEvent::Kind::kCandidate, &summary.outcomes.back());
  }
  summary.winner = best;
  if (summary.evaluated > 0) {
    auto store = [&](const CandidateOutcome& o, const TimingStats& t, int retiming) -> Status {
      ResultRecord rec;
      for (const auto& st : states) {
        if (st.tpl->manifest.name == o.template_name) rec.template_id = st.template_id;
      }
      rec.device_id = device_id;
      rec.problem_id = problem_id;
      rec.config = o.config;
      rec.median_ms = t.median_ms;
      rec.p20_ms = t.p20_ms;
      rec.p80_ms = t.p80_ms;
      rec.min_ms = t.min_ms;
      rec.max_ms = t.max_ms;
      rec.count = t.count;
      rec.samples_json = nlohmann::json(t.samples_ms).dump();
      rec.resources_json = resources_with_clocks(nullptr, t).dump();  // replaces the search's clocks
      rec.reason = "finalist re-timed interleaved (" + std::to_string(t.count) + " rounds" +
                   (t.stop == "raced" ? ", then dropped: slower than the leader in every round" : "") +
                   ")" + (retiming > 1 ? ", re-timing " + std::to_string(retiming) : std::string()) +
                   "; search median " + std::to_string(o.timing.median_ms) + " ms";
      if (const std::string n = t.clocks.note(); !n.empty()) rec.reason += "; " + n;
      return db_.replace_timing(rec);
    };
    const auto retime_start = Clock::now();
    emit_phase(TuneEvent::Phase::kRetime, static_cast<std::size_t>(std::max(0, request.protocol.max_finalists)));
    KF_TRY(retime_finalists(*runner, request.protocol, summary, store));
    summary.finalists_s = seconds_since(retime_start);
    if (auto note = best ? leader_change(summary, *best) : std::nullopt; note && on_event) {
      TuneEvent e = event(TuneEvent::Kind::kLeaderChanged, nullptr);
      e.best = &*summary.winner;
      e.replaced = &*best;
      e.note = *note;
      on_event(e);
    }
  }
  if (worker) {
    summary.worker_restarts = worker->restarts();
    summary.setup_s = worker->setup_seconds();
    summary.references_reused = worker->references_reused();
    summary.generators_lost = worker->generators_lost();
    summary.generators_lost_running = worker->generators_lost_running();
    summary.shares_rebuilt = worker->shares_rebuilt();
  }
  // A run whose candidates were all stored before writes no result, so the
  // winner is chosen again here: a tampered row never keeps the slot.
  for (const auto& st : states) KF_TRY(db_.refresh_winner(device_id, st.template_id, problem_id));
  KF_TRY(db_.finish_sweep(sweep_id, utc_now()));
  summary.total_s = seconds_since(t0);
  emit(TuneEvent::Kind::kDone, nullptr);
  return summary;
}

const FinalistTiming* winning_finalist(const TuneSummary& s) {
  if (!s.winner) return nullptr;
  for (const auto& f : s.finalists) {
    if (f.outcome.template_name == s.winner->template_name && f.outcome.config == s.winner->config) return &f;
  }
  return nullptr;
}

std::vector<const FinalistTiming*> within_noise_of_winner(const TuneSummary& s) {
  std::vector<const FinalistTiming*> out;
  const FinalistTiming* won = winning_finalist(s);
  if (!won) return out;
  for (const auto& f : s.finalists) {
    // One the race dropped lost every round to the leader: told apart.
    if (&f != won && f.interleaved.stop != "raced" && within_noise(f.interleaved, won->interleaved)) {
      out.push_back(&f);
    }
  }
  return out;
}

}  // namespace kforge
