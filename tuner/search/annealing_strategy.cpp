// Simulated annealing over a configuration space. It evaluates the same
// small space-filling design as the model strategy first (the default and any warm starts, then
// configurations spread over the space) and walks from the best of it: a
// walk from the default alone spends a small budget on the default's
// neighborhood, however slow that is. Neighbors of a configuration are the
// configurations that differ from it in exactly one feature (parameter).
// Energy is log time, so acceptance depends on ratios, not on the kernel's
// absolute speed.
#include <algorithm>
#include <cmath>

#include "tuner/search/search_strategies.hpp"
#include "tuner/search/strategy_features.hpp"

namespace kforge {

std::vector<double> history_scores(const std::vector<Observation>& history) {
  double worst = -1e300;
  bool any_ok = false;
  for (const auto& o : history) {
    if (o.ok && o.median_ms > 0) {
      worst = std::max(worst, std::log(o.median_ms));
      any_ok = true;
    }
  }
  const double fail = any_ok ? worst + 1.0 : 0.0;
  std::vector<double> out;
  out.reserve(history.size());
  for (const auto& o : history) out.push_back(o.ok && o.median_ms > 0 ? std::log(o.median_ms) : fail);
  return out;
}

namespace {

class AnnealingStrategy final : public Strategy {
 public:
  AnnealingStrategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts, std::uint64_t seed)
      : features_(features),
        rng_(seed),
        seen_(features.size(), false),
        neighbors_(one_parameter_neighbors_unsorted(features)) {
    design_ = initial_design(parameter_features(features), firsts, rng_);
  }

  std::string_view name() const override { return "annealing"; }

  std::optional<std::size_t> next(const std::vector<Observation>& history) override {
    const std::size_t n = features_.size();
    for (std::size_t i = consumed_; i < history.size(); ++i) {
      if (history[i].index < n) seen_[history[i].index] = true;
    }
    consumed_ = history.size();
    if (history.size() >= n) return std::nullopt;
    const auto scores = history_scores(history);
    std::size_t best = 0;
    for (std::size_t i = 1; i < history.size(); ++i) {
      if (scores[i] < scores[best]) best = i;
    }
    if (!history.empty()) best_ = history[best].index;
    if (history.size() < design_.size()) {
      for (std::size_t i : design_) {
        if (!seen_[i]) return propose(i);
      }
    }

    // Accept or reject the last proposal against the current state; the
    // walk starts at the best of the design.
    const std::size_t last = history.size() - 1;
    if (!current_) {
      current_ = best;
    } else if (history[last].ok) {
      const double delta = scores[last] - scores[*current_];
      const double temperature = kT0 * std::pow(kCooling, static_cast<double>(history.size()));
      if (delta <= 0 || rng_.uniform() < std::exp(-delta / std::max(temperature, 1e-9))) current_ = last;
    }
    // Move to an unevaluated neighbor of the current state; when there is
    // none, restart from the best so far, then anywhere unevaluated.
    for (std::size_t from : {history[*current_].index, history[best].index}) {
      std::vector<std::size_t> open;
      for (std::size_t j : neighbors_[from]) {
        if (!seen_[j]) open.push_back(j);
      }
      if (!open.empty()) {
        if (from != history[*current_].index) current_ = best;
        state_ = history[*current_].index;
        return propose(open[rng_.below(open.size())]);
      }
    }
    std::vector<std::size_t> open;
    for (std::size_t j = 0; j < n; ++j) {
      if (!seen_[j]) open.push_back(j);
    }
    if (open.empty()) return std::nullopt;
    return propose(open[rng_.below(open.size())]);
  }

  /// The rest of the design in its order. Then the walk's next step for
  /// each way the pending outcome can go, which is exact: the step draws
  /// from this strategy's generator, whose state is known, and the outcome
  /// only decides where the walk stands and whether the acceptance test
  /// draws first. Then the other unproposed neighbors of those states and
  /// of the best, in case the walk restarts.
  std::vector<std::size_t> likely_next(std::size_t n) const override {
    Guesses guesses(seen_, n);
    auto add = [&](std::size_t j) { guesses.add(j); };
    for (std::size_t i : design_) add(i);
    if (!last_ || consumed_ + 1 < design_.size()) return guesses.take();
    const std::size_t pending = *last_;
    auto open_neighbors = [&](std::size_t from) {
      std::vector<std::size_t> open;
      for (std::size_t j : neighbors_[from]) {
        if (!seen_[j]) open.push_back(j);
      }
      return open;
    };
    // The walk's step among `open`, with or without the acceptance draw first.
    auto step_among = [&](const std::vector<std::size_t>& open, bool acceptance_draw) {
      SplitMix64 rng = rng_;
      if (acceptance_draw) (void)rng.uniform();
      if (!open.empty()) add(open[rng.below(open.size())]);
    };
    auto step = [&](std::size_t from, bool acceptance_draw) { step_among(open_neighbors(from), acceptance_draw); };
    // The walk's state after the outcome: the pending proposal or where it
    // stands now (the best so far, when the walk has not started).
    const std::optional<std::size_t> stay = state_ ? state_ : best_;
    step(pending, false);  // accepted outright, or the best of the design
    if (stay) step(*stay, false);  // failed, or not the best of the design
    if (state_) {
      step(pending, true);  // accepted on the temperature's draw
      step(*state_, true);  // rejected by it
    }
    // Stuck where it stands and at the best: the step goes anywhere.
    if ((!stay || open_neighbors(*stay).empty()) && (!best_ || open_neighbors(*best_).empty())) {
      std::vector<std::size_t> anywhere;
      for (std::size_t j = 0; j < seen_.size(); ++j) {
        if (!seen_[j]) anywhere.push_back(j);
      }
      step_among(anywhere, false);
      step_among(anywhere, true);
    }
    for (std::optional<std::size_t> from : {std::optional<std::size_t>(pending), stay, best_}) {
      if (from) {
        for (std::size_t j : open_neighbors(*from)) add(j);
      }
    }
    return guesses.take();
  }

 private:
  static constexpr double kT0 = 0.5;        ///< initial temperature, in log-time units
  static constexpr double kCooling = 0.97;  ///< per evaluation

  std::size_t propose(std::size_t i) {
    seen_[i] = true;
    last_ = i;
    return i;
  }

  SpaceFeatures features_;
  SplitMix64 rng_;
  std::vector<bool> seen_;
  std::vector<std::vector<std::size_t>> neighbors_;
  std::vector<std::size_t> design_;     ///< evaluated first: the firsts inside the space, then the rest
  std::optional<std::size_t> current_;  ///< position in history of the current state
  std::size_t consumed_ = 0;
  std::optional<std::size_t> last_;   ///< the last proposal (likely_next)
  std::optional<std::size_t> state_;  ///< the walk's state at the last step, a configuration
  std::optional<std::size_t> best_;   ///< the best configuration at the last step
};

}  // namespace

std::unique_ptr<Strategy> make_annealing_strategy(const SpaceFeatures& features,
                                                  const std::vector<std::size_t>& firsts,
                                                  std::uint64_t seed) {
  return std::make_unique<AnnealingStrategy>(features, firsts, seed);
}

}  // namespace kforge
