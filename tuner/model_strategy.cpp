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

 private:
  static constexpr double kKappa = 0.75;               ///< spread weight of the lower confidence bound
  static constexpr std::size_t kLocalEvery = 3;        ///< every k-th model proposal is a neighbor of the best

  std::size_t propose(std::size_t i) {
    seen_[i] = true;
    return i;
  }

  SpaceFeatures features_;
  std::vector<std::vector<std::size_t>> neighbors_;
  std::uint64_t seed_;
  SplitMix64 rng_;
  std::vector<bool> seen_;
  std::vector<std::size_t> design_;  ///< the firsts (default, warm starts) inside the space, then the rest
  std::size_t model_picks_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(features, firsts, seed);
}

}  // namespace kforge
