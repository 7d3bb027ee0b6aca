// One run of the tuner (Tuner::run) as named steps over its state: prepare
// the templates and the runner, plan a batch compiled ahead, evaluate a
// turn, store its result, re-time the finalists, finish the sweep. Internal
// to the tuner.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/candidate_runner.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/warm_start.hpp"
#include "tuner/tuner.hpp"
#include "tuner/worker/worker_runner.hpp"

namespace kforge {

/// Per-template state of a sweep.
struct TemplateState {
  const TemplateSource* tpl = nullptr;
  std::int64_t template_id = 0;
  std::vector<Config> space;
  std::unique_ptr<Strategy> strategy;
  std::vector<Observation> history;
  std::map<std::string, ResultRecord> stored;  ///< config -> stored result
  bool exhausted = false;
  std::set<std::size_t> requested;    ///< sent to be compiled ahead
  std::set<std::size_t> guessed;      ///< sent ahead of their turn (a strategy's upcoming or likely next)
  std::vector<std::size_t> position;  ///< each configuration's place in the strategy's base order
  /// Taken from the strategy with a batch validated ahead, in the order
  /// they are timed: fastest untimed launch first.
  std::deque<std::size_t> queue;
  /// Of those, the ones whose validation ended them: their outcomes.
  std::map<std::size_t, Evaluation> failed_ahead;
};

class TuningSession {
 public:
  TuningSession(Device& device, Database& db, const Operator& op, const TuneRequest& request,
                const std::function<void(const TuneEvent&)>& on_event);
  /// The whole run, once: prepare, search, re-time, finish.
  Result<TuneSummary> run();

 private:
  using Clock = std::chrono::steady_clock;

  // Preparing: refusals before any row is written, then the sweep's rows,
  // each template's space and strategy, and where candidates run.
  Status prepare();
  Status begin_sweep();
  nlohmann::json sweep_settings() const;
  Status prepare_templates();
  Status prepare_template(const TemplateSource& tpl, const std::vector<WarmStart>& near);
  /// Why `m` has no valid configuration for the problem: the default's
  /// first failing envelope or constraint entry.
  std::string why_no_configuration(const TemplateManifest& m) const;
  Result<std::vector<Config>> template_space(const TemplateManifest& m, const std::vector<WarmStart>& near);
  Result<std::unique_ptr<Strategy>> template_strategy(const TemplateManifest& m,
                                                      const std::vector<Config>& space,
                                                      const std::vector<WarmStart>& near);
  Status load_stored(TemplateState& st);
  void plan_pipeline();
  Status start_runner();

  // Searching: turns round-robin over the templates until a stop condition.
  Status search();
  std::optional<std::size_t> propose(TemplateState& st);
  Result<std::size_t> plan_batch(TemplateState& st, std::size_t next);
  std::vector<std::size_t> batch_picks(TemplateState& st, std::size_t next);
  std::vector<std::pair<std::size_t, int>> in_groups(TemplateState& st,
                                                     const std::vector<std::size_t>& picks) const;
  std::vector<CandidateRef> batch_refs(TemplateState& st,
                                       const std::vector<std::pair<std::size_t, int>>& grouped,
                                       const std::vector<std::size_t>& picks) const;
  Result<std::size_t> time_fastest_first(TemplateState& st, std::size_t first,
                                         const std::vector<CandidateRef>& batch);
  Result<CandidateOutcome> evaluate_turn(TemplateState& st, std::size_t index);
  Result<Evaluation> evaluation_of(TemplateState& st, std::size_t index, double cut_against);
  Status store_result(const TemplateState& st, const CandidateOutcome& o, Evaluation& e);
  void record_turn(TemplateState& st, std::size_t index, CandidateOutcome o);
  bool is_default(const TemplateState& st, std::size_t index) const;
  void add_phase_times(const Evaluation& e);

  // Deciding the winner and closing the sweep.
  Status retime();
  Status store_retiming(const CandidateOutcome& o, const TimingStats& t, int retiming);
  Status finish();

  TuneEvent event(TuneEvent::Kind kind, const CandidateOutcome* o) const;
  void emit(TuneEvent::Kind kind, const CandidateOutcome* o) const;
  void emit_phase(TuneEvent::Phase phase, std::size_t batch) const;
  double elapsed_s() const;

  Device& device_;
  Database& db_;
  const Operator& op_;
  const TuneRequest& request_;
  const std::function<void(const TuneEvent&)>& on_event_;

  Clock::time_point t0_;
  Problem problem_;  ///< normalized
  DeviceLimits limits_;
  std::string_view prelude_;
  std::int64_t device_id_ = 0, problem_id_ = 0, sweep_id_ = 0;
  std::uint64_t workload_seed_ = 0;
  std::vector<TemplateState> states_;
  std::size_t total_ = 0;  ///< candidates planned

  // The compile pipeline (plan_pipeline).
  /// How batches are compiled ahead; its batch drops to 0 (each candidate
  /// compiled alone) when compiling ahead stops.
  CompilePipeline pipeline_;

  std::unique_ptr<CandidateRunner> runner_;
  WorkerRunner* worker_ = nullptr;  ///< runner_, when candidates run in a worker process

  TuneSummary summary_;
  std::map<std::string, int> failures_;   ///< by status name
  std::optional<CandidateOutcome> best_;  ///< the search's leader
  std::size_t since_improvement_ = 0;
  double first_done_s_ = 0;
  std::size_t compiled_in_batches_ = 0;  ///< candidates sent in batches so far (TuneEvent::compiled)
};

}  // namespace kforge
