// The tuning loop: enumerate, pick, compile, validate, time, commit.
#include "tuner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>

#include "builtin_templates.hpp"
#include "hash.hpp"
#include "instance.hpp"
#include "search_space.hpp"
#include "stop_condition.hpp"
#include "strategy.hpp"
#include "validator.hpp"

#ifndef KFORGE_VERSION
#define KFORGE_VERSION "unknown"
#endif
#ifndef KFORGE_GIT_REVISION
#define KFORGE_GIT_REVISION "unknown"
#endif

namespace kforge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
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

/// A workload's tensors on the device plus its host copy and reference.
struct DeviceWorkload {
  WorkloadKind kind;
  Workload host;
  Reference reference;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<KernelArg> args;
};

Result<DeviceWorkload> upload_workload(Device& device, const Operator& op, const Problem& p,
                                       std::uint64_t seed, WorkloadKind kind) {
  DeviceWorkload w{kind, op.make_workload(p, seed, kind), {}, {}, {}};
  w.reference = op.reference(p, w.host);
  for (const auto& t : w.host.tensors) {
    KF_TRY_ASSIGN(buf, device.allocate(std::max<std::size_t>(t.bytes.size(), 4)));
    KF_TRY(device.write(*buf, t.bytes.data(), t.bytes.size()));
    w.buffers.push_back(std::move(buf));
  }
  for (const auto& a : w.host.args) {
    switch (a.kind) {
      case OperatorArg::Kind::kTensor: w.args.push_back(KernelArg::of(*w.buffers[a.tensor])); break;
      case OperatorArg::Kind::kInt32: w.args.push_back(KernelArg::of(a.i32)); break;
      case OperatorArg::Kind::kFloat32: w.args.push_back(KernelArg::of(a.f32)); break;
    }
  }
  return w;
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

std::string_view kind_name(WorkloadKind k) {
  return k == WorkloadKind::kPoisonedOutput ? "poisoned-output run" : "accumulate run";
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
};

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

std::string rerun_command(const Problem& p, const std::string& template_name,
                          const std::string& config) {
  return "kforge tune --op " + p.op + " --shape " + p.dims_string() + " --dtype " +
         std::string(dtype_name(p.dtype)) + " --layout " + p.layout.name() +
         (p.epilogue.plain() ? "" : " --epilogue " + p.epilogue.name()) +
         (p.attrs.empty() ? "" : " --attr " + p.attrs_string()) + " --only-template " + template_name +
         " --config " + config;
}

Tuner::Tuner(Device& device, Database& db, const Operator& op) : device_(device), db_(db), op_(op) {}

Status Tuner::retime_finalists(const std::vector<const TemplateSource*>& templates,
                               const std::vector<KernelArg>& args, const Problem& problem,
                               std::string_view prelude, const DeviceLimits& limits,
                               const MeasurementProtocol& protocol, TuneSummary& summary) {
  std::vector<const CandidateOutcome*> ok;
  for (const auto& o : summary.outcomes) {
    if (o.status == CandidateStatus::kOk && o.timing.median_ms > 0) ok.push_back(&o);
  }
  std::sort(ok.begin(), ok.end(), [](const CandidateOutcome* a, const CandidateOutcome* b) {
    return a->timing.median_ms < b->timing.median_ms;
  });
  if (ok.size() > static_cast<std::size_t>(std::max(protocol.finalists, 0))) {
    ok.resize(static_cast<std::size_t>(std::max(protocol.finalists, 0)));
  }
  if (ok.size() < 2 || protocol.finalist_rounds < 1) return ok_status();
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<Finalist> finalists;
  for (const CandidateOutcome* o : ok) {
    const TemplateSource* tpl = nullptr;
    for (const TemplateSource* t : templates) {
      if (t->manifest.name == o->template_name) tpl = t;
    }
    if (!tpl) return ok_status();
    KF_TRY_ASSIGN(cfg, Config::parse(o->config));
    KF_TRY_ASSIGN(inst, instantiate(*tpl, prelude, op_, cfg, problem, limits));
    KF_TRY_ASSIGN(compiled, device_.compiler().compile(inst.source, inst.kernel_name, ""));
    KF_TRY_ASSIGN(kernel, device_.load(compiled));
    finalists.push_back({kernel.get(), &args, inst.geometry});
    kernels.push_back(std::move(kernel));
  }
  KF_TRY_ASSIGN(stats, measure_interleaved(device_, finalists, protocol));
  // The interleaved re-timing is reported beside each finalist. The declared
  // winner stays the one the database stores (fastest stored median), so that
  // `tune` and the runtime lookup always name the same configuration; storing
  // the re-timed distributions as the finalists' results is still to come.
  for (std::size_t i = 0; i < ok.size(); ++i) summary.finalists.push_back({*ok[i], stats[i]});
  summary.winner = *ok.front();
  return ok_status();
}

Result<TuneSummary> Tuner::run(const TuneRequest& request,
                               const std::function<void(const TuneEvent&)>& on_event) {
  const auto t0 = Clock::now();
  KF_TRY_ASSIGN(problem, op_.normalize(request.problem));
  if (request.templates.empty()) {
    return Error{ErrorCode::kUnsupported,
                 "no template implements " + problem.op + " for backend " + device_.info().backend, {}};
  }
  const DeviceInfo& info = device_.info();
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
  if (request.only_config) settings["only_config"] = *request.only_config;
  SweepRecord sweep;
  sweep.tool_version = KFORGE_VERSION;
  sweep.git_revision = KFORGE_GIT_REVISION;
  sweep.command_line = request.command_line;
  sweep.settings_json = settings.dump();
  sweep.device_json = info.to_json().dump();
  sweep.host = hostname();
  sweep.started_at = utc_now();
  KF_TRY_ASSIGN(sweep_id, db_.begin_sweep(sweep));

  // Fresh random inputs (never zeros), one set per validation kind; the
  // references are computed once and shared by every candidate.
  std::vector<DeviceWorkload> workloads;
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    KF_TRY_ASSIGN(w, upload_workload(device_, op_, problem, workload_seed + static_cast<int>(kind), kind));
    workloads.push_back(std::move(w));
  }

  // Per-template spaces and strategies.
  std::vector<TemplateState> states;
  std::size_t total = 0;
  for (const TemplateSource* tpl : request.templates) {
    const auto& m = tpl->manifest;
    if (!m.supports(problem.dtype) || !m.supports(problem.layout)) continue;
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
      KF_TRY_ASSIGN(all, space.enumerate());
      st.space = std::move(all);
    }
    const Config def = m.default_config();
    auto it = std::find(st.space.begin(), st.space.end(), def);
    const std::size_t first = it == st.space.end() ? st.space.size() : static_cast<std::size_t>(it - st.space.begin());
    KF_TRY_ASSIGN(strategy, make_strategy(request.strategy, space_features(st.space), first,
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
    return Error{ErrorCode::kUnsupported,
                 "no template of " + problem.op + " supports dtype " + std::string(dtype_name(problem.dtype)) +
                     " and layout " + problem.layout.name(), {}};
  }
  if (request.max_evals > 0) total = std::min<std::size_t>(total, static_cast<std::size_t>(request.max_evals));

  TuneSummary summary;
  summary.sweep_id = sweep_id;
  std::map<std::string, int> failures;
  std::optional<CandidateOutcome> best;
  auto emit = [&](TuneEvent::Kind kind, const CandidateOutcome* o) {
    if (!on_event) return;
    TuneEvent e;
    e.kind = kind;
    e.done = summary.outcomes.size();
    e.total = total;
    e.outcome = o;
    e.best = best ? &*best : nullptr;
    e.failures = failures;
    e.elapsed_s = seconds_since(t0);
    on_event(e);
  };
  emit(TuneEvent::Kind::kStart, nullptr);

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
    auto next = st.strategy->next(st.history);
    if (!next) {
      st.exhausted = true;
      --active;
      continue;
    }
    const Config& cfg = st.space[*next];
    const std::string name = cfg.canonical_name();
    const auto& m = st.tpl->manifest;

    CandidateOutcome o;
    if (auto s = st.stored.find(name); s != st.stored.end()) {
      o = outcome_from_record(s->second);
      o.template_name = m.name;
      ++summary.reused;
    } else {
      o.template_name = m.name;
      o.config = name;
      ResultRecord rec;
      std::string log;
      nlohmann::json resources;
      auto fail = [&](CandidateStatus status, const std::string& reason) {
        o.status = status;
        o.reason = reason;
      };
      auto t_compile = Clock::now();
      auto inst = instantiate(*st.tpl, prelude, op_, cfg, problem, limits);
      if (!inst.ok()) {
        fail(inst.error().code == ErrorCode::kResource ? CandidateStatus::kResourceLimit
                                                       : CandidateStatus::kNotSupported,
             inst.error().message);
      } else {
        auto compiled = device_.compiler().compile(inst->source, inst->kernel_name, "");
        summary.compile_s += seconds_since(t_compile);
        if (!compiled.ok()) {
          log = compiled.error().context;
          fail(status_for(compiled.error().code), compiled.error().message);
        } else {
          o.compile_ms = compiled->compile_ms;
          log = compiled->log;
          resources = compiled->resources.to_json();
          auto kernel = device_.load(*compiled);
          if (!kernel.ok()) {
            fail(status_for(kernel.error().code), kernel.error().message);
          } else {
            // Validate before timing: every validation run must pass.
            auto t_val = Clock::now();
            for (auto& w : workloads) {
              const HostTensor& out = w.host.tensors[w.host.output];
              Buffer& out_buf = *w.buffers[w.host.output];
              Status st_write = device_.write(out_buf, out.bytes.data(), out.bytes.size());
              auto launched = st_write.ok() ? device_.launch(**kernel, w.args, inst->geometry)
                                            : Result<double>(st_write.error());
              if (!launched.ok()) {
                fail(status_for(launched.error().code), launched.error().message);
                break;
              }
              std::vector<float> result(out.elements());
              Status st_read = device_.read(out_buf, result.data(), result.size() * sizeof(float));
              if (!st_read.ok()) {
                fail(CandidateStatus::kLaunchError, st_read.error().message);
                break;
              }
              ValidationResult v = validate_output(result.data(), result.size(), w.reference);
              o.error_norm = std::max(o.error_norm, v.error_norm);
              o.error_ratio = std::max(o.error_ratio, v.error_ratio);
              if (!v.passed) {
                fail(CandidateStatus::kWrongResult,
                     "wrong result: template " + m.name + " config " + name + " problem " +
                         problem.key() + " (" + std::string(kind_name(w.kind)) + "): " + v.describe() +
                         "; rerun: " + rerun_command(problem, m.name, name));
                break;
              }
            }
            summary.validate_s += seconds_since(t_val);
            if (o.status == CandidateStatus::kOk) {
              auto t_meas = Clock::now();
              auto timing = measure(device_, **kernel, workloads[0].args, inst->geometry, request.protocol,
                                    best ? best->timing.median_ms : 0.0);
              summary.measure_s += seconds_since(t_meas);
              if (!timing.ok()) {
                fail(status_for(timing.error().code), timing.error().message);
              } else {
                o.timing = std::move(*timing);
                if (o.timing.stop == "cut") {
                  o.reason = "cut after " + std::to_string(o.timing.count) + " repetitions: fastest " +
                             std::to_string(o.timing.min_ms) + " ms > " +
                             std::to_string(request.protocol.cut_ratio) + " x best " +
                             std::to_string(best->timing.median_ms) + " ms";
                }
              }
            }
          }
        }
      }
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
      rec.resources_json = resources.is_null() ? "{}" : resources.dump();
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
    if (states.front().tpl == st.tpl && name == m.default_config().canonical_name()) {
      summary.default_result = o;
    }
    summary.outcomes.push_back(std::move(o));
    emit(TuneEvent::Kind::kCandidate, &summary.outcomes.back());
  }
  summary.winner = best;
  if (summary.evaluated > 0) {
    std::vector<const TemplateSource*> tpls;
    for (const auto& st : states) tpls.push_back(st.tpl);
    KF_TRY(retime_finalists(tpls, workloads[0].args, problem, prelude, limits, request.protocol, summary));
  }
  KF_TRY(db_.finish_sweep(sweep_id, utc_now()));
  summary.total_s = seconds_since(t0);
  emit(TuneEvent::Kind::kDone, nullptr);
  return summary;
}

}  // namespace kforge
