// The adaptive strategies behind make_strategy (strategy.hpp): simulated
// annealing and the tree-surrogate model. Internal to the tuner library.
#pragma once

#include <memory>

#include "strategy.hpp"

namespace kforge {

std::unique_ptr<Strategy> make_annealing_strategy(const SpaceFeatures& features,
                                                  const std::vector<std::size_t>& firsts, std::uint64_t seed);
std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed);

/// Scores for a history: log(median) for ok outcomes; failures one unit of
/// log above the slowest ok one (or 0 when none is ok). Indexed like history.
std::vector<double> history_scores(const std::vector<Observation>& history);

}  // namespace kforge
