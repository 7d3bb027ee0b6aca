// `kforge tune`: tune one operator problem on one device into the database.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "db/database.hpp"
#include "generator/operator.hpp"
#include "tools/commands.hpp"
#include "tools/progress_printer.hpp"
#include "tools/runner_flags.hpp"
#include "tuner/profiling/winner_profiling.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_default.hpp"
#include "tuner/template_selection.hpp"
#include "tuner/tuner.hpp"

namespace kforge::cli {

namespace {

struct TuneOptions {
  std::string strategy;  ///< empty: default_strategy for the budget
  int max_evals = 0;
  int no_improvement = 0;
  double time_budget = 0;
  std::uint64_t seed = 1;
  int warm_start = 0;
  std::string config;
  std::string only_template;
  std::string library;  ///< compare, forbid or force; empty: $KFORGE_LIBRARY_<OP>
  bool quiet = false;
  std::string progress = "text";  ///< --progress: text or json (JSON lines)
  int min_reps = 5, max_reps = 30;
  double cut_ratio = MeasurementProtocol{}.cut_ratio;
  bool window_stop = MeasurementProtocol{}.stop_outside_window;
  bool profile = false;  ///< run the counter collectors on the winner and finalists
};

/// One line per profiled result and collector that read counters; a
/// collector that could not read says why once per run, not once per
/// finalist, since the reason (no PMU, no profiler) is the host's.
void print_profiled(const std::vector<ProfiledResult>& profiled) {
  std::map<std::pair<std::string, std::string>, int> unavailable;  // (collector, why) -> results
  std::vector<std::pair<std::string, std::string>> order;          // first seen first
  for (const ProfiledResult& p : profiled) {
    for (const CounterCollection& c : p.collections) {
      if (c.collector == "model") continue;
      if (!c.available()) {
        if (unavailable[{c.collector, c.unavailable}]++ == 0) order.emplace_back(c.collector, c.unavailable);
        continue;
      }
      std::cout << "counters of " << p.role << " " << p.template_name << " " << p.config << ": " << c.collector
                << " read " << c.readings.size() << " counters\n";
    }
  }
  for (const auto& key : order) {
    const int n = unavailable[key];
    std::cout << "counters: " << key.first << " " << key.second << " (" << n << (n == 1 ? " result" : " results")
              << ")\n";
  }
}

/// The search's flags: strategy, budget, seed, warm start, what to tune.
void add_search_flags(CLI::App* cmd, TuneOptions* t) {
  cmd->add_option("--strategy", t->strategy,
                  "Search strategy: exhaustive, random, annealing or model (default: the best measured at the --max-evals budget, else random)")
      ->check(CLI::IsMember(strategy_names()))
      ->capture_default_str();
  cmd->add_option("--max-evals", t->max_evals, "Stop after this many candidates (0: whole space)")
      ->check(integer_at_least(0));
  cmd->add_option("--no-improvement", t->no_improvement,
                  "Stop after this many candidates in a row without a faster one (0: never)")
      ->check(integer_at_least(0));
  cmd->add_option("--time-budget", t->time_budget, "Stop starting candidates after this many seconds (0: none)")
      ->check(finite_at_least(0));
  cmd->add_option("--seed", t->seed, "Seed for the strategy and the random inputs")->capture_default_str();
  cmd->add_option("--warm-start", t->warm_start,
                  "After the default, try the winners of up to this many nearest other problems of the same "
                  "family tuned on this device with the same template (0: none)")
      ->check(integer_at_least(0))
      ->capture_default_str();
  cmd->add_option("--config", t->config, "Evaluate only this configuration (canonical name)");
  cmd->add_option("--only-template", t->only_template, "Tune only this template");
  cmd->add_option(
         "--library", t->library,
         "Library candidates (vendor libraries such as CLBlast): compare (tune them beside the kernels), "
         "forbid (kernels only) or force (libraries only); default: $KFORGE_LIBRARY_<OP>, else compare")
      ->check(CLI::IsMember({"compare", "forbid", "force"}));
}

/// The measurement protocol's flags; returns --max-reps, whose presence the callback checks.
CLI::Option* add_timing_flags(CLI::App* cmd, TuneOptions* t) {
  cmd->add_option("--min-reps", t->min_reps, "Timed repetitions at least")
      ->check(integer_at_least(1))
      ->capture_default_str();
  auto* max_reps = cmd->add_option("--max-reps", t->max_reps,
                                   "Timed repetitions at most (raised to --min-reps when only that is given)")
                       ->check(integer_at_least(1))
                       ->capture_default_str();
  cmd->add_option("--cut-ratio", t->cut_ratio,
                  "Stop timing a candidate once 2 launches (its untimed validation launch and a timed one, or more) "
                  "are all more than this many times the best median so far (0: never)")
      ->check(finite_at_least(0))
      ->capture_default_str();
  cmd->add_flag("--window-stop,!--no-window-stop", t->window_stop,
                "Stop timing a candidate once its median's 95% interval lies above the finalist window of the best "
                "median so far (the default; --no-window-stop: time it until its interval is narrow or its "
                "budget is spent)");
  return max_reps;
}

/// The request the flags describe, for `problem` on `device`.
TuneRequest tune_request(const TuneOptions* t, RunnerOptions& runner, const TemplateCatalog& catalog,
                         bool user_templates, const Problem& problem, const Device& device) {
    TuneRequest req;
    req.problem = problem;
    const LibraryPolicy policy = unwrap(library_policy_for(problem.op, t->library));
    req.templates = select_templates(catalog, problem.op, device.info().backend, t->only_template,
                                     user_templates, policy);
    if (req.templates.empty()) {
      throw ErrorException(Error::bad_input("no template for " + problem.op + " on " + device.info().backend +
                                            (t->only_template.empty() ? "" : " named '" + t->only_template + "'")));
    }
    req.strategy_defaulted = t->strategy.empty();
    req.strategy = req.strategy_defaulted ? default_strategy(t->max_evals) : t->strategy;
    if (!t->config.empty()) req.only_config = t->config;
    req.max_evals = t->max_evals;
    req.time_budget_s = t->time_budget;
    req.no_improvement = t->no_improvement;
    req.seed = t->seed;
    req.warm_start = t->warm_start;
    req.protocol.min_reps = t->min_reps;
    req.protocol.max_reps = std::max(t->max_reps, t->min_reps);
    req.protocol.cut_ratio = t->cut_ratio;
    req.protocol.stop_outside_window = t->window_stop;
    req.command_line = command_line();
    unwrap(apply_runner_options(runner, req));

  return req;
}

/// Why there is no winner: the failures by status, and a hint when all timed out.
void print_no_winner(const std::map<std::string, int>& failures, const RunnerOptions& runner) {
  std::cout << "no candidate passed validation";
  std::string sep = " (";
  for (const auto& [status, n] : failures) {
    std::cout << sep << n << " " << status;
    sep = ", ";
  }
  std::cout << (failures.empty() ? "" : ")") << "\n";
  // Every candidate ran out of time: on a large problem or a slow device
  // that is more often the limit than a hang.
  if (failures.size() == 1 && failures.begin()->first == "timeout") {
    std::cout << "every candidate timed out; if they are slow rather than hung, raise --launch-timeout (now "
              << runner.launch_timeout_s << " s) or --compile-timeout (docs/measurement.md, \"Isolation\")\n";
  }
}

/// What was skipped or sampled, then how many candidates ran and failed.
void print_search(const TuneSummary& s, const Problem& problem, const DeviceInfo& info) {
  for (const auto& [name, reason] : s.search.skipped_templates) std::cout << "\nskipped " << name << ": " << reason;
  for (const auto& [name, note] : s.search.partial_spaces) std::cout << "\npart of the space: " << note;
  for (const auto& w : s.search.warm_starts) {
    std::cout << "\nwarm start " << w.template_name << " " << w.config << ": the winner of " << w.from_problem
              << " (log2 distance " << fmt(w.distance, 3) << ")";
  }
  std::cout << "\n" << problem.key() << " on " << info.name << " (" << info.selector
            << "): " << s.counts.evaluated + s.counts.reused << " candidates (" << s.counts.reused
            << " already stored), " << s.counts.failed << " failed, " << fmt(s.times.total_s, 3) << " s\n";
}

/// A device that does not time (the Triton interpreter): what it validated
/// is the result, and there is no winner to expect.
void print_validated(const TuneSummary& s, const Problem& problem, const DeviceInfo& info) {
  print_search(s, problem, info);
  std::cout << s.counts.validated << " candidate" << (s.counts.validated == 1 ? "" : "s")
            << " validated against the reference on " << info.name
            << " (logic only: it does not time kernels, so nothing is a winner)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& o : s.outcomes) {
    rows.push_back({o.template_name, o.config, std::string(status_name(o.status)),
                    o.status == CandidateStatus::kValidated ? fmt(o.error_ratio, 3) : o.reason});
  }
  print_table({"template", "config", "status", "error / tolerance, or why"}, rows);
}

/// The human-readable summary of a finished tune.
void print_summary(const TuneSummary& s, const Problem& problem, const DeviceInfo& info, double flops) {
    print_search(s, problem, info);
    std::vector<std::vector<std::string>> rows;
    auto row = [&](const std::string& label, const CandidateOutcome& c) {
      rows.push_back({label, c.template_name, c.config, std::string(status_name(c.status)),
                      fmt(c.timing.median_ms), fmt(c.timing.p20_ms) + " / " + fmt(c.timing.p80_ms),
                      c.timing.median_ms > 0 ? fmt(flops / (c.timing.median_ms * 1e-3) / 1e9, 4) : "-"});
    };
    if (s.winner) row("winner", *s.winner);
    if (s.default_result) row("default", *s.default_result);
    print_table({"", "template", "config", "status", "median ms", "p20 / p80 ms", "GFLOP/s"}, rows);
    if (!s.retiming.note.empty()) std::cout << "note: " << s.retiming.note << "\n";
    // Finalists the re-timing cannot tell from the winner: another run may name one of them.
    if (const FinalistTiming* won = winning_finalist(s)) {
      const auto interval = [](const TimingStats& timing) {
        return fmt(timing.median_ms) + " ms [" + fmt(timing.ci.low_ms) + ", " + fmt(timing.ci.high_ms) + "]";
      };
      for (const FinalistTiming* f : within_noise_of_winner(s)) {
        std::cout << "within noise of the winner: " << f->outcome.template_name << " " << f->outcome.config << " "
                  << interval(f->interleaved) << " against " << interval(won->interleaved)
                  << " (interleaved medians and their intervals)\n";
      }
    }
    if (s.winner && s.default_result && s.default_result->status == CandidateStatus::kOk)
      std::cout << "speedup over default: " << fmt(s.default_result->timing.median_ms / s.winner->timing.median_ms, 3)
                << "x\n";
}

}  // namespace

void add_tune_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("tune", "Tune an operator problem on a device: validate and time candidates, "
                                         "store every result and the winner in the database");
  auto t = std::make_shared<TuneOptions>();
  auto runner = std::make_shared<RunnerOptions>();
  add_problem_flags(*cmd, o);
  add_db_flag(*cmd, o);
  add_device_flag(*cmd, o);
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  add_search_flags(cmd, t.get());
  auto* max_reps = add_timing_flags(cmd, t.get());
  cmd->add_flag("--quiet", t->quiet, "No progress output");
  cmd->add_option("--progress", t->progress,
                  "Progress on stderr, with --json too: text (a line per candidate) or json (a JSON object per "
                  "event, a line each)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag(
      "--profile", t->profile,
      "After tuning, read hardware counters of the winner and finalists in separate launches (perf on a "
      "CPU, ncu on NVIDIA; docs/profiling.md); without it only their availability is recorded");
  add_runner_flags(*cmd, *runner);
  cmd->callback([&o, t, runner, max_reps] {
    if (max_reps->count() > 0 && t->max_reps < t->min_reps) {
      throw ErrorException(Error::bad_input("--max-reps: " + std::to_string(t->max_reps) +
                                            " is less than --min-reps " + std::to_string(t->min_reps)));
    }
    TemplateCatalog catalog = make_catalog(o);  // first: it registers declared operators
    Problem problem = make_problem(o);
    auto device = open_device(o);
    auto db = unwrap(Database::open(o.db, Database::Mode::kReadWrite));
    const Operator* op = find_operator(problem.op);

    TuneRequest req = tune_request(t.get(), *runner, catalog, !o.template_dirs.empty(), problem, *device);
    Tuner tuner(*device, *db, *op);
    // Progress goes to stderr, so that --json's result alone is on stdout.
    ProgressPrinter progress(t->quiet, t->progress == "json" ? ProgressPrinter::Format::kJsonLines
                                                             : ProgressPrinter::Format::kText);
    std::map<std::string, int> failures;  // by status, as the last event counted them
    TuneSummary s = unwrap(tuner.run(req, [&](const TuneEvent& e) {
      failures = e.failures;
      progress(e);
    }));
    const double flops = op->flops(problem);
    const auto profiled = unwrap(profile_winners(*db, *device, *op, req, s, t->profile));

    if (o.json) {
      nlohmann::json j = {{"device", device->info().name},
                          {"device_selector", device->info().selector},
                          {"problem", problem.key()}};
      j.update(to_json(s, flops));
      j.update(strategy_record(req));
      j["profiled"] = to_json(profiled);
      print_json(j);
      if (!s.winner && s.counts.validated == 0) throw ExitStatus{kExitNoCandidatePassed};
      return;
    }
    if (!device->times_kernels()) {
      print_validated(s, problem, device->info());
      std::cout << "database: " << o.db << "\n";
      if (s.counts.validated == 0) throw ExitStatus{kExitNoCandidatePassed};
      return;
    }
    print_summary(s, problem, device->info(), flops);
    if (!s.winner) print_no_winner(failures, *runner);
    print_profiled(profiled);
    std::cout << "database: " << o.db << "\n";
    if (!s.winner) throw ExitStatus{kExitNoCandidatePassed};
  });
}

}  // namespace kforge::cli
