// An ensemble of extremely randomized regression trees: the surrogate model
// of the model-based strategy. Small, deterministic for a seed, and fast
// enough to refit after every evaluation on spaces of thousands of points.
#pragma once

#include <cstdint>
#include <vector>

namespace kforge {

class RegressionForest {
 public:
  struct Options {
    int trees = 24;
    int min_leaf = 2;       ///< a node with fewer samples becomes a leaf
    int max_depth = 14;
    int split_tries = 6;    ///< random (feature, threshold) candidates per node
  };

  /// Fits on rows `x` (same width) and targets `y`; each tree on a bootstrap sample.
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y, std::uint64_t seed,
           const Options& options);
  void fit(const std::vector<std::vector<double>>& x, const std::vector<double>& y, std::uint64_t seed) {
    fit(x, y, seed, Options{});
  }
  /// Mean and standard deviation of the trees' predictions at `row`.
  void predict(const std::vector<double>& row, double& mean, double& stddev) const;
  bool empty() const { return trees_.empty(); }

 private:
  struct Node {
    int feature = -1;  ///< -1: leaf
    double threshold = 0, value = 0;
    int left = -1, right = -1;
  };
  using Tree = std::vector<Node>;
  std::vector<Tree> trees_;
};

}  // namespace kforge
