#include "strategy_default.hpp"

namespace kforge {

std::string default_strategy(int max_evals) { return max_evals > 0 ? "model" : "random"; }

}  // namespace kforge
