// Model-based search: a few random configurations, then, after every
// evaluation, refit a tree-ensemble surrogate of log time and propose the
// unevaluated configuration with the lowest lower confidence bound
// (mean - kappa * spread across trees). A small share of proposals stays
// random so that a wrong model cannot trap the search.
#include <algorithm>
#include <cmath>

#include "regression_forest.hpp"
#include "search_strategies.hpp"

namespace kforge {

namespace {

class ModelStrategy final : public Strategy {
 public:
  ModelStrategy(const SpaceFeatures& features, std::size_t first, std::uint64_t seed)
      : features_(features), first_(first), seed_(seed), rng_(seed), seen_(features.size(), false) {
    // Enough random points to see every parameter vary, few enough to leave
    // the budget to the model.
    initial_ = std::clamp<std::size_t>(features_.size() / 50, 6, 12);
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
    if (history.empty() && first_ < n) return propose(first_);
    if (history.size() < initial_ || rng_.uniform() < kExplore) return propose(open[rng_.below(open.size())]);

    std::vector<std::vector<double>> x;
    for (const auto& o : history) x.push_back(features_[o.index]);
    const auto y = history_scores(history);
    RegressionForest forest;
    forest.fit(x, y, seed_ ^ (0x9e3779b97f4a7c15ull * (history.size() + 1)));
    std::size_t pick = open[0];
    double best = 1e300;
    for (std::size_t j : open) {
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
  static constexpr double kKappa = 1.0;
  static constexpr double kExplore = 0.1;

  std::size_t propose(std::size_t i) {
    seen_[i] = true;
    return i;
  }

  SpaceFeatures features_;
  std::size_t first_;
  std::uint64_t seed_;
  SplitMix64 rng_;
  std::vector<bool> seen_;
  std::size_t initial_ = 8;
};

}  // namespace

std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, std::size_t first,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(features, first, seed);
}

}  // namespace kforge
