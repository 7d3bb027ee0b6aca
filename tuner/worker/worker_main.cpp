// The worker process: one tuning context, many candidates.
#include "tuner/worker/worker_main.hpp"

#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <new>

#include "generator/declared_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/profiling/counter_collection.hpp"
#include "runtime/profiling/perf_counters.hpp"
#include "tuner/candidate_evaluator.hpp"
#include "tuner/measure/device_reference.hpp"
#include "tuner/worker/worker_protocol.hpp"

namespace kforge {

namespace {

/// What the worker holds between requests.
struct WorkerContext {
  std::unique_ptr<Device> device;
  TemplateCatalog catalog;
  std::unique_ptr<CandidateEvaluator> runner;
};

/// `on_reference` hears, before the references are computed, which user
/// reference is about to run (a library that may crash the worker).
Result<std::unique_ptr<WorkerContext>> make_context(
    const RunnerSetup& s, const std::function<void(const std::string&)>& on_reference) {
  auto ctx = std::make_unique<WorkerContext>();
  KF_TRY_ASSIGN(catalog, TemplateCatalog::builtin());
  ctx->catalog = std::move(catalog);
  for (const auto& origin : s.template_origins) {
    if (origin.rfind("builtin:", 0) != 0) KF_TRY(ctx->catalog.add_dir(origin));
  }
  std::vector<const TemplateSource*> templates;
  for (const auto& origin : s.template_origins) {
    const TemplateSource* found = nullptr;
    for (const auto& t : ctx->catalog.all()) {
      if (t.origin == origin) found = &t;
    }
    if (!found) return Error::not_found("worker: no template from '" + origin + "'");
    templates.push_back(found);
  }
  const Operator* op = find_operator(s.problem.op);
  if (!op) return Error::not_found("worker: no operator '" + s.problem.op + "'");
  KF_TRY_ASSIGN(device, open_device(s.device_selector));
  ctx->device = std::move(device);
  if (const auto* declared = dynamic_cast<const DeclaredOperator*>(op)) {
    on_reference(describe_reference(*declared, ctx->device->info()));
  }
  std::optional<BinaryCache> cache;
  if (!s.cache_dir.empty()) {
    KF_TRY_ASSIGN(c, BinaryCache::open(s.cache_dir));
    cache.emplace(std::move(c));
  }
  KF_TRY_ASSIGN(runner, CandidateEvaluator::create(*ctx->device, *op, s.problem, std::move(templates),
                                                   s.workload_seed, s.protocol, std::move(cache), s.pipeline,
                                                   s.code_generator, s.reference_dir));
  runner->set_rerun_database(s.database);
  ctx->runner = std::move(runner);
  return ctx;
}

nlohmann::json error_message(const Error& e) {
  return {{"type", "error"}, {"message", e.message + (e.context.empty() ? "" : ": " + e.context)}};
}

/// The worker's requests until "quit" or the tuner leaves.
int serve(MessageChannel& channel) {
  nlohmann::json m;
  if (channel.receive(m) != MessageChannel::Wait::kMessage || m.value("type", "") != "setup") return 2;
  auto setup = setup_from_json(m);
  if (!setup.ok()) {
    (void)channel.send(error_message(setup.error()));
    return 2;
  }
  auto ctx = make_context(*setup, [&](const std::string& reference) {
    (void)channel.send({{"type", "phase"}, {"phase", "reference"}, {"reference", reference}});
  });
  if (!ctx.ok()) {
    (void)channel.send(error_message(ctx.error()));
    return 1;
  }
  CandidateEvaluator& runner = *(*ctx)->runner;
  if (!channel.send({{"type", "ready"}, {"references_loaded", runner.references_loaded()}}).ok()) return 1;

  while (channel.receive(m) == MessageChannel::Wait::kMessage) {
    const std::string type = m.value("type", "");
    if (type == "quit") return 0;
    if (type == "evaluate" || type == "validate") {
      auto cfg = Config::parse(m.value("config", ""));
      if (!cfg.ok()) {
        (void)channel.send(error_message(cfg.error()));
        continue;
      }
      auto on_phase = [&](std::string_view phase) { (void)channel.send({{"type", "phase"}, {"phase", phase}}); };
      auto e = type == "validate" ? runner.validate(m.value("template", ""), *cfg, on_phase)
                                  : runner.evaluate(m.value("template", ""), *cfg, m.value("best_ms", 0.0), on_phase);
      if (!e.ok()) {
        (void)channel.send(error_message(e.error()));
        continue;
      }
      nlohmann::json reply = to_json(*e);
      reply["type"] = "evaluation";
      // A crash status here is a sticky device error: the context is gone,
      // so this worker leaves and the tuner starts a fresh one.
      const bool restart = e->status == CandidateStatus::kCrash;
      reply["restart"] = restart;
      if (!channel.send(reply).ok() || restart) return restart ? 3 : 1;
      continue;
    }
    if (type == "precompile") {
      auto report = runner.precompile(refs_from_json(m.value("batch", nlohmann::json::array())));
      if (!report.ok()) {
        (void)channel.send(error_message(report.error()));
        continue;
      }
      (void)channel.send({{"type", "precompiled"},
                          {"queued", report->queued},
                          {"overlapped", report->overlapped},
                          {"compiled", report->compiled},
                          {"failed", report->failed},
                          {"cache_hits", report->cache_hits},
                          {"combined", report->combined},
                          {"wall_s", report->wall_s}});
      continue;
    }
    if (type == "generate") {
      auto launched = runner.generate({m.value("template", ""), m.value("config", "")},
                                      [&] { (void)channel.send({{"type", "phase"}, {"phase", "running"}}); });
      if (!launched.ok()) {
        (void)channel.send(error_message(launched.error()));
        continue;
      }
      (void)channel.send({{"type", "generated"}, {"ok", *launched}});
      continue;
    }
    if (type == "retime") {
      auto report = runner.retime(refs_from_json(m.value("finalists", nlohmann::json::array())));
      if (!report.ok()) {
        (void)channel.send(error_message(report.error()));
        continue;
      }
      nlohmann::json timings = nlohmann::json::array();
      for (const auto& t : report->timings) timings.push_back(to_json(t));
      (void)channel.send({{"type", "retimed"}, {"timings", timings}, {"compiled_alone", report->compiled_alone}});
      continue;
    }
    (void)channel.send(error_message(Error::bad_input("worker: unknown request type '" + type + "'")));
  }
  return 0;
}

/// The profile launch's one line of output.
int report_profile(const nlohmann::json& j, int status) {
  std::cout << kProfileLinePrefix << j.dump() << std::endl;
  return status;
}

}  // namespace

int run_profile_launch(const std::vector<std::string>& args) {
  if (args.size() < 3 || args.size() > 4 || (args.size() == 4 && args[3] != "perf")) {
    return report_profile({{"error", "usage: kforge __profile-launch SETUP_FILE TEMPLATE CONFIG [perf]"}}, 2);
  }
  std::ifstream in(args[0]);
  const nlohmann::json setup_json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  auto setup = setup_from_json(setup_json);
  if (!setup.ok()) return report_profile({{"error", args[0] + ": " + setup.error().message}}, 2);
  auto cfg = Config::parse(args[2]);
  if (!cfg.ok()) return report_profile({{"error", cfg.error().message}}, 2);
  auto ctx = make_context(*setup, [](const std::string&) {});
  if (!ctx.ok()) return report_profile({{"error", ctx.error().message}}, 1);
  const bool perf = args.size() == 4;
  CounterCollection counted;
  auto e = (*ctx)->runner->profile_launch(args[1], *cfg, [&](const std::function<Status()>& launch) {
    if (perf)
      counted = collect_perf(launch);
    else
      (void)launch();
  });
  if (!e.ok()) return report_profile({{"error", e.error().message}}, 1);
  nlohmann::json j = {{"status", std::string(status_name(e->status))}, {"reason", e->reason}};
  if (perf && e->status == CandidateStatus::kOk) j["perf"] = to_json(counted);
  return report_profile(j, e->status == CandidateStatus::kOk ? 0 : 1);
}

int run_tuner_worker(int fd) {
  MessageChannel channel(fd);
  try {
    return serve(channel);
  } catch (const std::bad_alloc&) {
    // What failed to allocate is unwound and freed by now, so the message
    // can be sent: the tuner reports it instead of a bare abort.
    (void)channel.send(
        error_message(Error{ErrorCode::kResource,
                            "worker: out of host memory (std::bad_alloc); the problem's inputs, "
                            "references or a candidate need more memory than the host has",
                            {}}));
    return 4;
  }
}

}  // namespace kforge
