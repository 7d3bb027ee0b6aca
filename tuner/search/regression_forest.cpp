// Extremely randomized trees: each split is the best of a few random
// (feature, threshold) pairs by variance reduction, weighed from running
// sums in one pass over the node's samples.
#include "tuner/search/regression_forest.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/search/strategy.hpp"

namespace kforge {

namespace {

struct Builder {
  const std::vector<std::vector<double>>& x;
  const std::vector<double>& y;
  const RegressionForest::Options& opt;
  SplitMix64& rng;
};

/// Builds the subtree over the samples idx[begin, end), partitioning them in
/// place (stably) at each split. A tried split is weighed in two passes, no
/// copies; sums run in sample order, the order a copied side would have.
template <typename Node>
int build(std::vector<Node>& tree, const Builder& b, std::vector<std::size_t>& idx, std::size_t begin,
          std::size_t end, int depth) {
  const int id = static_cast<int>(tree.size());
  tree.push_back(Node{});
  const std::size_t count = end - begin;
  double sum = 0;
  for (std::size_t k = begin; k < end; ++k) sum += b.y[idx[k]];
  const double mean = count ? sum / static_cast<double>(count) : 0.0;
  tree[static_cast<std::size_t>(id)].value = mean;
  if (static_cast<int>(count) < 2 * b.opt.min_leaf || depth >= b.opt.max_depth) return id;
  double parent = 0;
  for (std::size_t k = begin; k < end; ++k) parent += (b.y[idx[k]] - mean) * (b.y[idx[k]] - mean);
  if (parent <= 1e-12) return id;
  const std::size_t dims = b.x[idx[begin]].size();
  double best_gain = 0;
  int best_feature = -1;
  double best_threshold = 0;
  for (int t = 0; t < b.opt.split_tries; ++t) {
    const auto f = static_cast<std::size_t>(b.rng.below(dims));
    double lo = 1e300, hi = -1e300;
    for (std::size_t k = begin; k < end; ++k) {
      lo = std::min(lo, b.x[idx[k]][f]);
      hi = std::max(hi, b.x[idx[k]][f]);
    }
    if (hi <= lo) continue;
    const double threshold = lo + (hi - lo) * b.rng.uniform();
    double side_sum[2] = {0, 0};
    std::size_t side_count[2] = {0, 0};
    for (std::size_t k = begin; k < end; ++k) {
      const int side = b.x[idx[k]][f] <= threshold ? 0 : 1;
      side_sum[side] += b.y[idx[k]];
      ++side_count[side];
    }
    if (side_count[0] == 0 || side_count[1] == 0) continue;
    const double side_mean[2] = {side_sum[0] / static_cast<double>(side_count[0]),
                                 side_sum[1] / static_cast<double>(side_count[1])};
    double side_sse[2] = {0, 0};
    for (std::size_t k = begin; k < end; ++k) {
      const int side = b.x[idx[k]][f] <= threshold ? 0 : 1;
      const double d = b.y[idx[k]] - side_mean[side];
      side_sse[side] += d * d;
    }
    const double gain = parent - side_sse[0] - side_sse[1];
    if (gain > best_gain) {
      best_gain = gain;
      best_feature = static_cast<int>(f);
      best_threshold = threshold;
    }
  }
  if (best_feature < 0) return id;
  const auto f = static_cast<std::size_t>(best_feature);
  const auto first = idx.begin() + static_cast<std::ptrdiff_t>(begin);
  const auto middle = std::stable_partition(first, idx.begin() + static_cast<std::ptrdiff_t>(end),
                                            [&](std::size_t i) { return b.x[i][f] <= best_threshold; });
  const std::size_t split = begin + static_cast<std::size_t>(middle - first);
  const int left = build(tree, b, idx, begin, split, depth + 1);
  const int right = build(tree, b, idx, split, end, depth + 1);
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
    build(tree, b, sample, 0, sample.size(), 0);
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
