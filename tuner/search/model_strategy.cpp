// Model-based search. The strategy sees the space through derived features
// (strategy_features.hpp: logs of the parameter values and their pairwise
// sums and differences, i.e. products and ratios such as a tile's area or
// the work per thread) and nothing else about it. It starts with a small
// space-filling design (the default, then one at a time the configuration
// farthest from those chosen), then after every evaluation refits a
// tree ensemble on log time and proposes the unevaluated configuration with
// the lowest lower confidence bound (mean - kappa * spread across trees).
// Until kLocalUntil outcomes every model proposal, after that every third,
// is restricted to the incumbent's one-parameter neighbors, so the search
// also refines the best configuration found so far. Failed
// configurations count as slower than every ok one (history_scores).
#include <algorithm>
#include <cmath>

#include "tuner/search/coded_space.hpp"
#include "tuner/search/regression_forest.hpp"
#include "tuner/search/search_strategies.hpp"
#include "tuner/search/strategy_features.hpp"

namespace kforge {

namespace {

class ModelStrategy final : public Strategy {
 public:
  ModelStrategy(CodedSpace space, const std::vector<std::size_t>& firsts, std::uint64_t seed)
      : space_(std::move(space)), features_(space_), seed_(seed), rng_(seed), seen_(space_.size(), false) {
    // A small design leaves most of a small budget to the model. Greedy
    // maximin over the forest's own features: over nineteen recorded
    // landscapes the model reached 0.95 of the optimum within 10% of the
    // space on 805 of 950 seed-landscapes with it, 757 over the parameters
    // alone (docs/measurement.md, "Search efficiency"). A space too large
    // to weigh whole is weighed on draws.
    const std::size_t n = space_.size();
    if (n <= kPool) {
      SpaceFeatures rows;
      for (std::size_t i = 0; i < n; ++i) rows.push_back(features_.row(i));
      design_ = initial_design(rows, firsts, rng_, 0);
    } else {
      design_ = sampled_design(features_, n, firsts, initial_design_size(n, firsts.size()), kPool, rng_);
    }
  }

  ModelStrategy(const ModelStrategy&) = delete;  // features_ points into space_
  ModelStrategy& operator=(const ModelStrategy&) = delete;

  std::string_view name() const override { return "model"; }

  std::optional<std::size_t> next(const std::vector<Observation>& history) override {
    const std::size_t n = space_.size();
    for (std::size_t i = observed_.size(); i < history.size(); ++i) {
      const std::size_t at = history[i].index;
      if (at < n && !seen_[at]) {
        seen_[at] = true;
        ++seen_count_;
      }
      observed_.push_back(at);
      x_.push_back(features_.row(at < n ? at : 0));
    }
    if (seen_count_ >= n) return std::nullopt;
    scores_ = history_scores(history);
    if (history.size() < design_.size()) {
      for (std::size_t i : design_) {
        if (!seen_[i]) return propose(i);
      }
    }

    const std::size_t incumbent = lowest(scores_);
    fit_.fit(x_, scores_, fit_seed(history.size()));
    fit_size_ = history.size();

    std::vector<std::size_t> candidates;
    if (local_pick(++model_picks_, history.size()) && !history.empty()) {
      for (std::size_t j : space_.neighbors(history[incumbent].index)) {
        if (!seen_[j]) candidates.push_back(j);
      }
    }
    if (candidates.empty()) candidates = pool(history.size());
    return propose(lowest_bound(fit_, candidates).front());
  }

  /// The rest of the design in its order; then the candidates next() will
  /// weigh by the bound of the fit the next pick will make if the pending
  /// proposal's outcome is what the model now predicts for it (a "believer"
  /// fit, with the seed next() will use), led by the neighbors of that fit's
  /// incumbent and of the present one when the next pick is a local one.
  /// The real outcome moves the fit, so the guess is usually, not always,
  /// right.
  std::vector<std::size_t> likely_next(std::size_t n) const override {
    Guesses guesses(seen_, n);
    auto add = [&](std::size_t j) { guesses.add(j); };
    for (std::size_t i : design_) add(i);
    // The model needs two outcomes; the design has at least that many.
    if (!last_ || observed_.size() < 2 || observed_.size() + 1 < design_.size()) return guesses.take();

    std::vector<std::vector<double>> x = x_;
    std::vector<double> y = scores_;
    // next() fitted on these outcomes already, unless its pick was the
    // design's last point.
    const bool fitted = fit_size_ == observed_.size() && !fit_.empty();
    RegressionForest own;
    if (!fitted) own.fit(x, y, fit_seed(observed_.size()));
    const RegressionForest& now = fitted ? fit_ : own;
    double believed = 0, spread = 0;
    const auto pending = features_.row(*last_);
    now.predict(pending, believed, spread);
    x.push_back(pending);
    y.push_back(believed);
    RegressionForest then;
    then.fit(x, y, fit_seed(observed_.size() + 1));

    // The next pick is the model's first, or its k-th, counted as next() will.
    const bool design_done = observed_.size() >= design_.size();
    if (design_done && local_pick(model_picks_ + 1, observed_.size() + 1)) {
      // The incumbent after the outcome: the best so far or the pending
      // proposal; the believed one's neighbors first.
      const std::size_t at = lowest(scores_);
      const std::size_t best = observed_[at];
      const bool pending_best = believed < scores_[at];
      std::vector<std::size_t> local;
      for (std::size_t from : {pending_best ? *last_ : best, pending_best ? best : *last_}) {
        for (std::size_t j : space_.neighbors(from)) {
          if (!seen_[j]) local.push_back(j);
        }
      }
      for (std::size_t j : lowest_bound(then, local)) add(j);
    }
    for (std::size_t j : lowest_bound(then, pool(observed_.size() + 1))) add(j);
    return guesses.take();
  }

 private:
  static constexpr double kKappa = 0.75;          ///< spread weight of the lower confidence bound
  static constexpr std::size_t kLocalEvery = 3;   ///< every k-th model proposal is a neighbor of the best
  /// Before this many outcomes every model proposal is a neighbor of the
  /// best: a forest fitted on a handful of points ranks far configurations
  /// poorly, while the best one's neighbors are likely good. On the five
  /// GPU landscapes of bench/RESULTS.md ("search_replay"), 30 against 15
  /// raised the mean fraction of the optimum after 25, 50 and 200
  /// evaluations (0.861 to 0.866, 0.894 to 0.911, 0.992 to 0.999) and left
  /// 10, 15 and 100 as they were; 50 lost at 200 (0.985).
  static constexpr std::size_t kLocalUntil = 30;

  /// Whether the `pick`-th model proposal, made after `outcomes`, is restricted to the incumbent's neighbors.
  static bool local_pick(std::size_t pick, std::size_t outcomes) {
    return outcomes < kLocalUntil || pick % kLocalEvery == 0;
  }
  /// Unevaluated configurations a model pick weighs: all of them in a space
  /// this small, otherwise this many drawn, so that a proposal costs the
  /// same at 10^4 configurations as at 10^7.
  static constexpr std::size_t kPool = 2048;

  /// Position of the lowest score, the first of equals (0 when empty).
  static std::size_t lowest(const std::vector<double>& scores) {
    const auto it = std::min_element(scores.begin(), scores.end());
    return it == scores.end() ? 0 : static_cast<std::size_t>(it - scores.begin());
  }

  /// The forest's seed for a history of `size` outcomes.
  std::uint64_t fit_seed(std::size_t size) const { return seed_ ^ (0x9e3779b97f4a7c15ull * (size + 1)); }

  /// The unevaluated configurations a pick after `size` outcomes weighs, in
  /// space order: every one when at most kPool are left, otherwise kPool
  /// draws (fewer where draws repeat) from a generator seeded by `size`, so
  /// that likely_next draws what next() will.
  std::vector<std::size_t> pool(std::size_t size) const {
    const std::size_t n = space_.size();
    std::vector<std::size_t> out;
    if (n - seen_count_ <= kPool) {
      for (std::size_t j = 0; j < n; ++j) {
        if (!seen_[j]) out.push_back(j);
      }
      return out;
    }
    SplitMix64 draw(fit_seed(size) ^ 0x706f6f6c00000000ull);
    for (std::size_t k = 0; k < kPool; ++k) {
      const auto j = static_cast<std::size_t>(draw.below(n));
      if (!seen_[j]) out.push_back(j);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  /// `candidates` ordered by the forest's lower confidence bound, lowest
  /// first, equals in their given order.
  std::vector<std::size_t> lowest_bound(const RegressionForest& forest, std::vector<std::size_t> candidates) const {
    std::vector<double> bound(candidates.size());
    std::vector<double> row;
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      double mean = 0, spread = 0;
      features_.row(candidates[k], row);
      forest.predict(row, mean, spread);
      bound[k] = mean - kKappa * spread;
    }
    std::vector<std::size_t> order(candidates.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bound[a] < bound[b]; });
    std::vector<std::size_t> out;
    for (std::size_t k : order) out.push_back(candidates[k]);
    return out;
  }

  std::size_t propose(std::size_t i) {
    if (!seen_[i]) ++seen_count_;
    seen_[i] = true;
    last_ = i;
    return i;
  }

  CodedSpace space_;
  DerivedFeatureRows features_;  ///< reads space_
  std::uint64_t seed_;
  SplitMix64 rng_;
  std::vector<bool> seen_;
  std::size_t seen_count_ = 0;
  std::vector<std::size_t> design_;  ///< the firsts (default, warm starts) inside the space, then the rest
  std::size_t model_picks_ = 0;
  std::vector<std::size_t> observed_;      ///< the configurations of the history at the last proposal
  std::vector<std::vector<double>> x_;     ///< and their features
  std::vector<double> scores_;             ///< and their scores (history_scores)
  RegressionForest fit_;                   ///< next()'s last fit, on the first `fit_size_` outcomes
  std::size_t fit_size_ = 0;
  std::optional<std::size_t> last_;  ///< the last proposal
};

}  // namespace

std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(CodedSpace::from_features(features), firsts, seed);
}

std::unique_ptr<Strategy> make_model_strategy(CodedSpace space, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed) {
  return std::make_unique<ModelStrategy>(std::move(space), firsts, seed);
}

}  // namespace kforge
