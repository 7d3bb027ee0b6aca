// Model-based search. The strategy sees the space through derived features
// (strategy_features.hpp: logs of the parameter values and their pairwise
// sums and differences, i.e. products and ratios such as a tile's area or
// the work per thread) and nothing else about it. It starts with a small
// space-filling design (the default, then one at a time the configuration
// farthest from those chosen), then after every evaluation refits a
// tree ensemble on log time and proposes the unevaluated configuration with
// the lowest lower confidence bound (mean - kappa * spread across trees). Every third model
// proposal is restricted to the incumbent's one-parameter neighbors, so the
// search also refines the best configuration found so far. Failed
// configurations count as slower than every ok one (history_scores).
#include <algorithm>
#include <cmath>

#include "regression_forest.hpp"
#include "search_strategies.hpp"
#include "strategy_features.hpp"

namespace kforge {

namespace {

class ModelStrategy final : public Strategy {
 public:
  ModelStrategy(const SpaceFeatures& raw, const std::vector<std::size_t>& firsts, std::uint64_t seed)
      : features_(derived_features(raw)),
        neighbors_(one_parameter_neighbors(raw)),
        seed_(seed),
        rng_(seed),
        seen_(raw.size(), false) {
    // A small design leaves most of a small budget to the model. Greedy
    // maximin over the forest's own features: over nineteen recorded
    // landscapes the model reached 0.95 of the optimum within 10% of the
    // space on 805 of 950 seed-landscapes with it, 757 over the parameters
    // alone (docs/measurement.md, "Search efficiency").
    design_ = initial_design(features_, firsts, rng_, 0);
  }

  std::string_view name() const override { return "model"; }

  std::optional<std::size_t> next(const std::vector<Observation>& history) override {
    const std::size_t n = features_.size();
    for (const auto& o : history) {
      if (o.index < n) seen_[o.index] = true;
    }
    std::vector<std::size_t> open;
    for (std::size_t j = 0; j < n; ++j) {
      if (!seen_[j]) open.push_back(j);
    }
    if (open.empty()) return std::nullopt;
    observed_.clear();
    for (const auto& o : history) observed_.push_back(o.index);
    scores_ = history_scores(history);
    if (history.size() < design_.size()) {
      for (std::size_t i : design_) {
        if (!seen_[i]) return propose(i);
      }
    }

    std::vector<std::vector<double>> x;
    for (const auto& o : history) x.push_back(features_[o.index]);
    const auto& y = scores_;
    const std::size_t incumbent = lowest(y);
    RegressionForest& forest = fit_;
    forest.fit(x, y, fit_seed(history.size()));
    fit_size_ = history.size();

    std::vector<std::size_t> candidates;
    if (++model_picks_ % kLocalEvery == 0 && !history.empty()) {
      for (std::size_t j : neighbors_[history[incumbent].index]) {
        if (!seen_[j]) candidates.push_back(j);
      }
    }
    if (candidates.empty()) candidates = std::move(open);
    std::size_t pick = candidates[0];
    double best = 1e300;
    for (std::size_t j : candidates) {
      double mean = 0, spread = 0;
      forest.predict(features_[j], mean, spread);
      const double lcb = mean - kKappa * spread;
      if (lcb < best) {
        best = lcb;
        pick = j;
      }
    }
    return propose(pick);
  }

  /// The rest of the design in its order; then the open configurations by
  /// the bound of the fit the next pick will make if the pending proposal's
  /// outcome is what the model now predicts for it (a "believer" fit, with
  /// the seed next() will use), led by the neighbors of that fit's incumbent
  /// and of the present one when the next pick is a local one. The real
  /// outcome moves the fit, so the guess is usually, not always, right.
  std::vector<std::size_t> likely_next(std::size_t n) const override {
    Guesses guesses(seen_, n);
    auto add = [&](std::size_t j) { guesses.add(j); };
    for (std::size_t i : design_) add(i);
    // The model needs two outcomes; the design has at least that many.
    if (!last_ || observed_.size() < 2 || observed_.size() + 1 < design_.size()) return guesses.take();

    std::vector<std::vector<double>> x;
    for (std::size_t i : observed_) x.push_back(features_[i]);
    std::vector<double> y = scores_;
    // next() fitted on these outcomes already, unless its pick was the
    // design's last point.
    const bool fitted = fit_size_ == observed_.size() && !fit_.empty();
    RegressionForest own;
    if (!fitted) own.fit(x, y, fit_seed(observed_.size()));
    const RegressionForest& now = fitted ? fit_ : own;
    double believed = 0, spread = 0;
    now.predict(features_[*last_], believed, spread);
    x.push_back(features_[*last_]);
    y.push_back(believed);
    RegressionForest then;
    then.fit(x, y, fit_seed(observed_.size() + 1));

    std::vector<double> bound(seen_.size(), 0.0);
    std::vector<std::size_t> open;
    for (std::size_t j = 0; j < seen_.size(); ++j) {
      if (seen_[j]) continue;
      double mean = 0, sd = 0;
      then.predict(features_[j], mean, sd);
      bound[j] = mean - kKappa * sd;
      open.push_back(j);
    }
    auto by_bound = [&](std::vector<std::size_t> js) {
      std::stable_sort(js.begin(), js.end(), [&](std::size_t a, std::size_t b) { return bound[a] < bound[b]; });
      for (std::size_t j : js) add(j);
    };
    // The next pick is the model's first, or its k-th, counted as next() will.
    const bool design_done = observed_.size() >= design_.size();
    if (design_done && (model_picks_ + 1) % kLocalEvery == 0) {
      // The incumbent after the outcome: the best so far or the pending
      // proposal; the believed one's neighbors first.
      const std::size_t at = lowest(scores_);
      const std::size_t best = observed_[at];
      const bool pending_best = believed < scores_[at];
      std::vector<std::size_t> local = neighbors_[pending_best ? *last_ : best];
      const auto& other = neighbors_[pending_best ? best : *last_];
      local.insert(local.end(), other.begin(), other.end());
      by_bound(std::move(local));
    }
    by_bound(std::move(open));
    return guesses.take();
  }

 private:
  static constexpr double kKappa = 0.75;               ///< spread weight of the lower confidence bound
  static constexpr std::size_t kLocalEvery = 3;        ///< every k-th model proposal is a neighbor of the best

  /// Position of the lowest score, the first of equals (0 when empty).
  static std::size_t lowest(const std::vector<double>& scores) {
    const auto it = std::min_element(scores.begin(), scores.end());
    return it == scores.end() ? 0 : static_cast<std::size_t>(it - scores.begin());
  }

  /// The forest's seed for a history of `size` outcomes.
  std::uint64_t fit_seed(std::size_t size) const { return seed_ ^ (0x9e3779b97f4a7c15ull * (size + 1)); }

  std::size_t propose(std::size_t i) {
    seen_[i] = true;
    last_ = i;
    return i;
  }

  SpaceFeatures features_;
  std::vector<std::vector<std::size_t>> neighbors_;
  std::uint64_t seed_;
  SplitMix64 rng_;
  std::vector<bool> seen_;
  std::vector<std::size_t> design_;  ///< the firsts (default, warm starts) inside the space, then the rest
  std::size_t model_picks_ = 0;
  std::vector<std::size_t> observed_;  ///< the configurations of the history at the last proposal
  std::vector<double> scores_;         ///< and their scores (history_scores)
  RegressionForest fit_;             ///< next()'s last fit, on the first `fit_size_` outcomes
  std::size_t fit_size_ = 0;
  std::optional<std::size_t> last_;  ///< the last proposal
};

}  // namespace

std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(features, firsts, seed);
}

}  // namespace kforge
