// Which search strategy `kforge tune` runs when none is named.
#pragma once

#include <string>

namespace kforge {

/// The strategy for an evaluation budget (`max_evals`, 0: none): the one
/// with the highest mean fraction of the optimum at the nearest measured
/// budget (10, 15, 25, 50, 100, 200) on the recorded GPU landscapes
/// (bench/RESULTS.md, "search_replay"): annealing at 10 (by 0.001) and
/// near 100, the model elsewhere; random order without a budget, where
/// the whole space is evaluated and the order only decides what is
/// compiled first.
std::string default_strategy(int max_evals);

}  // namespace kforge
