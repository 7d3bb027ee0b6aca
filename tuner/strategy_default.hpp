// Which search strategy `kforge tune` runs when none is named.
#pragma once

#include <string>

namespace kforge {

/// The strategy for an evaluation budget (`max_evals`, 0: none): the one
/// that measures best at budgets of 10 to 200 on the recorded GPU
/// landscapes (bench/RESULTS.md, "search_replay"), the model, when there
/// is a budget; random order when the whole space is evaluated anyway,
/// where the order only decides what is compiled first.
std::string default_strategy(int max_evals);

}  // namespace kforge
