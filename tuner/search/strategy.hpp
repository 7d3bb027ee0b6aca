// Search strategies: which configuration of a space to evaluate next, given
// the outcomes so far. Deterministic for a given seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct Observation {
  std::size_t index = 0;  ///< position in the space
  bool ok = false;
  double median_ms = 0.0;
};

/// Numeric features of a space: one row per configuration, one column per
/// parameter (the same columns in every row). Local search moves along them
/// and the model-based strategy learns from them.
using SpaceFeatures = std::vector<std::vector<double>>;

/// A search strategy: which configuration to evaluate next given every
/// outcome so far. `history` holds one entry per configuration the strategy
/// proposed, in order, each with its outcome (the caller appends it before
/// asking again). A strategy never proposes a configuration twice.
class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  /// The next configuration to evaluate; nullopt when the strategy is done.
  virtual std::optional<std::size_t> next(const std::vector<Observation>& history) = 0;
  /// The next `n` proposals when they do not depend on outcomes (fixed-order
  /// strategies), so that the tuner can compile them ahead; empty when unknown.
  virtual std::vector<std::size_t> upcoming(std::size_t n) const {
    (void)n;
    return {};
  }
  /// At most `n` configurations this strategy may propose next, most likely
  /// first, none proposed already: a guess from what it knew at its last
  /// proposal, before that proposal's outcome. Where compiling costs the
  /// device nothing (a GPU's host cores), the tuner compiles them while the
  /// current candidate is measured. Asking never changes what next()
  /// proposes. Fixed-order strategies answer upcoming(n), which is exact.
  virtual std::vector<std::size_t> likely_next(std::size_t n) const { return upcoming(n); }
  /// A fixed-order strategy's order before its `firsts` were moved to the
  /// front, every configuration once; empty for an adaptive strategy. The
  /// tuner groups runs of it into combined programs (CandidateRef::group).
  virtual const std::vector<std::size_t>& base_order() const {
    static const std::vector<std::size_t> none;
    return none;
  }
};

/// Every strategy proposes `firsts` (the default configuration, then any warm
/// starts: winners of nearby tuned problems) before anything else, those
/// inside the space and each once, and is deterministic for a seed, its
/// `firsts` and a sequence of outcomes:
///   exhaustive  space order
///   random      a seeded permutation
///   annealing   a small space-filling design (initial_design in
///               strategy_features.hpp, sampled: 5 draws per point), then simulated annealing from its
///               best over configurations that differ in one parameter, on
///               log time; restarts from the best when stuck
///   model       a design of the same size, greedy maximin over the derived
///               features (its first point opposite the default), then a
///               tree-ensemble surrogate (extremely randomized trees on log
///               time over those derived features: logs of the values and
///               their pairwise sums and differences) picks
///               the lowest lower confidence bound among unevaluated
///               configurations (all of them up to 2,048 left, otherwise
///               2,048 drawn, so a pick costs the same at 10^4 and 10^7);
///               every third pick only among the best one's one-parameter
///               neighbors
/// Failed candidates count as slower than every ok one.
Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, const SpaceFeatures& features,
                                                const std::vector<std::size_t>& firsts, std::uint64_t seed);
/// As above with one first configuration (the default).
Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, const SpaceFeatures& features,
                                                std::size_t first, std::uint64_t seed);
/// As above for a space without features: configuration i has feature {i}.
Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, std::size_t space_size,
                                                std::size_t first, std::uint64_t seed);

class CodedSpace;
/// As above over a coded space (coded_space.hpp). The model strategy keeps
/// the codes and never a row of features per configuration, which is what
/// lets it search a space of 10^7; annealing is given the values as features.
Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, CodedSpace space,
                                                const std::vector<std::size_t>& firsts, std::uint64_t seed);

/// Names make_strategy accepts.
std::vector<std::string> strategy_names();

/// splitmix64: a small portable generator whose output is the same everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, n), n > 0 (rejection sampling, no modulo bias).
  std::uint64_t below(std::uint64_t n);
  /// Uniform in [0, 1).
  double uniform();

 private:
  std::uint64_t s_;
};

}  // namespace kforge
