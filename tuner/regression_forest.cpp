// Extremely randomized trees: each split is the best of a few random
// (feature, threshold) pairs by variance reduction.
#include "regression_forest.hpp"

#include <algorithm>
#include <cmath>

#include "strategy.hpp"

namespace kforge {

namespace {

struct Builder {
  const std::vector<std::vector<double>>& x;
  const std::vector<double>& y;
  const RegressionForest::Options& opt;
  SplitMix64& rng;

  double mean_of(const std::vector<std::size_t>& idx) const {
    double s = 0;
    for (std::size_t i : idx) s += y[i];
    return idx.empty() ? 0.0 : s / static_cast<double>(idx.size());
  }

  double sse(const std::vector<std::size_t>& idx) const {
    const double m = mean_of(idx);
    double s = 0;
    for (std::size_t i : idx) s += (y[i] - m) * (y[i] - m);
    return s;
  }
};

template <typename Node>
int build(std::vector<Node>& tree, const Builder& b, std::vector<std::size_t> idx, int depth) {
  const int id = static_cast<int>(tree.size());
  tree.push_back(Node{});
  tree[static_cast<std::size_t>(id)].value = b.mean_of(idx);
  if (static_cast<int>(idx.size()) < 2 * b.opt.min_leaf || depth >= b.opt.max_depth) return id;
  const double parent = b.sse(idx);
  if (parent <= 1e-12) return id;
  const std::size_t dims = b.x[idx[0]].size();
  double best_gain = 0;
  int best_feature = -1;
  double best_threshold = 0;
  for (int t = 0; t < b.opt.split_tries; ++t) {
    const auto f = static_cast<std::size_t>(b.rng.below(dims));
    double lo = 1e300, hi = -1e300;
    for (std::size_t i : idx) {
      lo = std::min(lo, b.x[i][f]);
      hi = std::max(hi, b.x[i][f]);
    }
    if (hi <= lo) continue;
    const double threshold = lo + (hi - lo) * b.rng.uniform();
    std::vector<std::size_t> l, r;
    for (std::size_t i : idx) (b.x[i][f] <= threshold ? l : r).push_back(i);
    if (l.empty() || r.empty()) continue;
    const double gain = parent - b.sse(l) - b.sse(r);
    if (gain > best_gain) {
      best_gain = gain;
      best_feature = static_cast<int>(f);
      best_threshold = threshold;
    }
  }
  if (best_feature < 0) return id;
  std::vector<std::size_t> l, r;
  for (std::size_t i : idx) {
    (b.x[i][static_cast<std::size_t>(best_feature)] <= best_threshold ? l : r).push_back(i);
  }
  const int left = build(tree, b, std::move(l), depth + 1);
  const int right = build(tree, b, std::move(r), depth + 1);
  auto& node = tree[static_cast<std::size_t>(id)];
  node.feature = best_feature;
  node.threshold = best_threshold;
  node.left = left;
  node.right = right;
  return id;
}

}  // namespace

void RegressionForest::fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                           std::uint64_t seed, const Options& options) {
  trees_.clear();
  if (x.empty()) return;
  SplitMix64 rng(seed);
  Builder b{x, y, options, rng};
  for (int t = 0; t < options.trees; ++t) {
    std::vector<std::size_t> sample(x.size());
    for (auto& s : sample) s = static_cast<std::size_t>(rng.below(x.size()));
    Tree tree;
    build(tree, b, std::move(sample), 0);
    trees_.push_back(std::move(tree));
  }
}

void RegressionForest::predict(const std::vector<double>& row, double& mean, double& stddev) const {
  double s = 0, s2 = 0;
  for (const Tree& tree : trees_) {
    int n = 0;
    while (tree[static_cast<std::size_t>(n)].feature >= 0) {
      const Node& node = tree[static_cast<std::size_t>(n)];
      n = row[static_cast<std::size_t>(node.feature)] <= node.threshold ? node.left : node.right;
    }
    const double v = tree[static_cast<std::size_t>(n)].value;
    s += v;
    s2 += v * v;
  }
  const double k = static_cast<double>(std::max<std::size_t>(trees_.size(), 1));
  mean = s / k;
  stddev = std::sqrt(std::max(0.0, s2 / k - mean * mean));
}

}  // namespace kforge
