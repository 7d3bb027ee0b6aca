// What the model-based and annealing strategies see of a space besides
// outcomes: features derived from the raw parameter columns, a space-filling
// initial design and one-parameter neighborhoods. Generic over any template's space: nothing
// here knows a parameter's name or meaning, only its values.
#pragma once

#include <cstddef>
#include <vector>

#include "tuner/search/coded_space.hpp"
#include "tuner/search/strategy.hpp"

namespace kforge {

/// Features derived from raw parameter columns, each scaled to [0, 1] over
/// the space: per non-constant column its log2 (log2(1 + v - min) when the
/// column has values <= 0), then for every pair of those columns the sum
/// and the difference of the logs (log of the product and of the ratio:
/// a tile's area, the work per thread). Constant columns are dropped; a
/// space whose columns are all constant gets one column of zeros. Every row
/// has the same width.
SpaceFeatures derived_features(const SpaceFeatures& raw);

/// derived_features one row at a time: the same columns, in the same order
/// and scaled alike, computed from a coded space when asked, so that a
/// strategy over a large space holds its codes and not n rows of features.
/// Building it passes over the space once (the pairwise columns' ranges).
class DerivedFeatureRows {
 public:
  explicit DerivedFeatureRows(const CodedSpace& space);
  std::size_t width() const { return width_; }
  /// Row `i` of derived_features(raw) for the raw table `space` codes.
  std::vector<double> row(std::size_t i) const;
  /// The same into `out`, reusing its storage.
  void row(std::size_t i, std::vector<double>& out) const;

 private:
  struct Pair {
    std::size_t a = 0, b = 0;  ///< positions in logs_
    double sum_lo = 0, sum_span = 0, diff_lo = 0, diff_span = 0;  ///< span 0: the column is dropped
  };
  const CodedSpace* space_ = nullptr;
  std::vector<std::size_t> columns_;        ///< the space's columns that vary
  std::vector<std::vector<double>> logs_;   ///< per such column, log of each value code
  std::vector<double> log_lo_, log_span_;   ///< and the logs' range over the space
  std::vector<Pair> pairs_;
  std::size_t width_ = 0;
};

/// A space-filling design of `count` configurations that starts with
/// `firsts` (those inside the space, in order, each once; when none is, one
/// `rng` picks) and adds one
/// configuration at a time: of `candidates` drawn at random (best-candidate
/// sampling), the one farthest (Euclidean, over `features`) from the design
/// so far; `candidates` = 0 weighs every configuration (greedy maximin, ties
/// broken by `rng`). Configurations equal in every feature to a chosen one
/// are never added, so it may return fewer than `count`.
std::vector<std::size_t> space_filling_design(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::size_t count, std::size_t candidates, SplitMix64& rng);

/// The scaled logs of the raw columns that vary, one column per parameter.
SpaceFeatures parameter_features(const SpaceFeatures& raw);

/// Where a search starts: `firsts` (those inside the space: the default, then
/// any warm starts), then a space-filling design over `features`
/// (Euclidean), 2% of the space and 4 to 10 configurations in all, and at
/// least one beyond `firsts`. Each point is the farthest from those chosen
/// among `draws_per_point` configurations drawn from `rng` (best-candidate
/// sampling: the seed picks the design too, so a design that misses the
/// good region does not doom every seed alike), or with 0 among every
/// configuration (greedy maximin, ties broken by `rng`): its first point
/// beyond the default is then the configuration opposite it, often the
/// corner where tile sizes and vector widths are largest.
///
/// The model weighs every configuration over derived_features, the columns
/// its forest splits on: besides each parameter's extremes its design then
/// spans the extremes of products and ratios (a tile's area, the work per
/// thread, its aspect). Annealing draws 5 over parameter_features, where
/// each parameter counts once. docs/measurement.md, "Search efficiency",
/// gives the measurements behind both.
std::vector<std::size_t> initial_design(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                        SplitMix64& rng, std::size_t draws_per_point = 5);

/// space_filling_design for a space too large to weigh whole: `firsts`, then
/// one at a time the farthest from the design of `draws` configurations drawn
/// from `rng`, over `features` computed a row at a time.
std::vector<std::size_t> sampled_design(const DerivedFeatureRows& features, std::size_t size,
                                        const std::vector<std::size_t>& firsts, std::size_t count,
                                        std::size_t draws, SplitMix64& rng);

/// initial_design's count of configurations for a space of `size` with `firsts`.
std::size_t initial_design_size(std::size_t size, std::size_t firsts);

/// For every configuration, the configurations that differ from it in
/// exactly one raw column.
std::vector<std::vector<std::size_t>> one_parameter_neighbors(const SpaceFeatures& raw);
/// The same lists, column by column, and within a column in the order of
/// the other columns' values: the order simulated annealing draws from.
std::vector<std::vector<std::size_t>> one_parameter_neighbors_unsorted(const SpaceFeatures& raw);

}  // namespace kforge
