// Model-based search. The strategy sees the space through derived features
// (strategy_features.hpp: logs of the parameter values and their pairwise
// sums and differences, i.e. products and ratios such as a tile's area or
// the work per thread) and nothing else about it. It starts with a small
// space-filling design (the default, then of a few random configurations
// the one farthest from those chosen), then after every evaluation refits a
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
    // A small design leaves most of a small budget to the model.
    design_ = initial_design(raw, firsts, rng_);
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
    if (history.size() < design_.size()) {
      for (std::size_t i : design_) {
        if (!seen_[i]) return propose(i);
      }
    }

    std::vector<std::vector<double>> x;
    for (const auto& o : history) x.push_back(features_[o.index]);
    const auto y = history_scores(history);
    std::size_t incumbent = 0;
    for (std::size_t i = 1; i < y.size(); ++i) {
      if (y[i] < y[incumbent]) incumbent = i;
    }
    RegressionForest forest;
    forest.fit(x, y, seed_ ^ (0x9e3779b97f4a7c15ull * (history.size() + 1)));

    std::vector<std::size_t> candidates;
    if (++model_picks_ % kLocalEvery == 0 && !history.empty()) {
      for (std::size_t j : neighbors_[history[incumbent].index]) {
        if (!seen_[j]) candidates.push_back(j);
      }
    }
    if (candidates.empty()) candidates = std::move(open);
    // Every open configuration's bound is kept for likely_next(), so the
    // whole open set is scored even when the pick is among neighbors.
    lcb_.assign(n, kUnscored);
    for (std::size_t j = 0; j < n; ++j) {
      if (seen_[j]) continue;
      double mean = 0, spread = 0;
      forest.predict(features_[j], mean, spread);
      lcb_[j] = mean - kKappa * spread;
    }
    incumbent_ = history[incumbent].index;
    std::size_t pick = candidates[0];
    double best = 1e300;
    for (std::size_t j : candidates) {
      if (lcb_[j] < best) {
        best = lcb_[j];
        pick = j;
      }
    }
    return propose(pick);
  }

  /// The rest of the design in its order; then, from the last fit, the
  /// lowest bounds first, led by the neighbors of the incumbent and of the
  /// pending proposal (which may become the incumbent) when the next model
  /// pick is a local one. The refit after the pending outcome moves the
  /// bounds a little, so the guess is usually, not always, right.
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
    if (lcb_.empty()) return out;
    auto by_bound = [&](std::vector<std::size_t> js) {
      std::stable_sort(js.begin(), js.end(), [&](std::size_t a, std::size_t b) { return lcb_[a] < lcb_[b]; });
      for (std::size_t j : js) add(j);
    };
    if ((model_picks_ + 1) % kLocalEvery == 0) {
      std::vector<std::size_t> local = neighbors_[incumbent_];
      if (last_) local.insert(local.end(), neighbors_[*last_].begin(), neighbors_[*last_].end());
      by_bound(std::move(local));
    }
    std::vector<std::size_t> open;
    for (std::size_t j = 0; j < seen_.size(); ++j) {
      if (!seen_[j] && lcb_[j] != kUnscored) open.push_back(j);
    }
    by_bound(std::move(open));
    return out;
  }

 private:
  static constexpr double kKappa = 0.75;               ///< spread weight of the lower confidence bound
  static constexpr std::size_t kLocalEvery = 3;        ///< every k-th model proposal is a neighbor of the best

  static constexpr double kUnscored = 1e300;          ///< no bound: proposed already when last fitted

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
  std::vector<double> lcb_;          ///< the last fit's bound per configuration (likely_next)
  std::size_t incumbent_ = 0;        ///< the best configuration at the last fit
  std::optional<std::size_t> last_;  ///< the last proposal
};

}  // namespace

std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(features, firsts, seed);
}

}  // namespace kforge
