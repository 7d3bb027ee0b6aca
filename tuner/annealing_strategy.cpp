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

#include "search_strategies.hpp"
#include "strategy_features.hpp"

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
    design_ = initial_design(features, firsts, rng_);
  }

  std::string_view name() const override { return "annealing"; }

  std::optional<std::size_t> next(const std::vector<Observation>& history) override {
    const std::size_t n = features_.size();
    for (std::size_t i = consumed_; i < history.size(); ++i) {
      if (history[i].index < n) seen_[history[i].index] = true;
    }
    consumed_ = history.size();
    if (history.size() >= n) return std::nullopt;
    if (history.size() < design_.size()) {
      for (std::size_t i : design_) {
        if (!seen_[i]) return propose(i);
      }
    }

    // Accept or reject the last proposal against the current state; the
    // walk starts at the best of the design.
    const auto scores = history_scores(history);
    std::size_t best = 0;
    for (std::size_t i = 1; i < history.size(); ++i) {
      if (scores[i] < scores[best]) best = i;
    }
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
        best_ = history[best].index;
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

  /// The rest of the design in its order; then the unproposed neighbors of
  /// the two states the walk can be in after the pending outcome (the
  /// pending proposal, if accepted, or the current state), alternating, then
  /// those of the best. The next step is a uniform pick among one of them.
  std::vector<std::size_t> likely_next(std::size_t n) const override {
    std::vector<std::size_t> out;
    std::vector<bool> taken(seen_.size(), false);
    auto add = [&](std::size_t j) {
      if (out.size() < n && !seen_[j] && !taken[j]) {
        taken[j] = true;
        out.push_back(j);
      }
    };
    for (std::size_t i : design_) add(i);
    if (!last_) return out;
    // Before the walk starts its state is the best of the design so far.
    const std::size_t state = state_.value_or(*last_);
    const auto& a = neighbors_[*last_];
    const auto& b = neighbors_[state];
    for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
      if (k < a.size()) add(a[k]);
      if (k < b.size()) add(b[k]);
    }
    if (best_) {
      for (std::size_t j : neighbors_[*best_]) add(j);
    }
    return out;
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
