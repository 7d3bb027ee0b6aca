// The configurations one template's strategy chooses among for a problem:
// the whole valid space where it is small enough to walk, otherwise a
// uniform sample of it (or, for the exhaustive strategy under an evaluation
// budget, the first configurations of its order). Nothing here holds more
// than a bounded number of configurations, whatever the cartesian size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/config.hpp"
#include "generator/search_space.hpp"

namespace kforge {

struct TuningSpaceLimits {
  std::uint64_t max_walked = 1u << 16;  ///< valid configurations a space may hold and still be taken whole
  std::uint64_t max_nodes = 1u << 22;   ///< assignments the counting walk visits before it calls a space large
  std::size_t sample_size = 1024;       ///< configurations drawn from a large space (more under a larger budget)
  std::uint64_t max_tries = 100000;     ///< uniform draws per sampled configuration before sampling gives up
};

struct TuningSpace {
  std::vector<Config> configs;
  bool whole = true;  ///< configs are every valid configuration, in enumeration order
  std::string note;   ///< where not whole: what configs are and the space they came from
};

/// The tuning space of `space` for `strategy` with an evaluation budget of
/// `max_evals` (0: none). Where the valid space holds at most
/// `limits.max_walked` configurations it is enumerated whole, exactly as
/// SearchSpace::enumerate. Otherwise: the exhaustive strategy takes the first
/// `max_evals` of the enumeration order (refused without a budget: an error
/// naming the size and the strategies that sample); the others take `firsts`
/// (the default, warm starts) where valid, for annealing and model their
/// one-parameter neighbors too, then configurations drawn uniformly with a
/// generator seeded by `seed` until the sample holds `limits.sample_size`
/// (or `max_evals`, when larger) drawn ones.
Result<TuningSpace> make_tuning_space(const SearchSpace& space, std::string_view strategy, int max_evals,
                                      const std::vector<Config>& firsts, std::uint64_t seed,
                                      const TuningSpaceLimits& limits = {});

}  // namespace kforge
