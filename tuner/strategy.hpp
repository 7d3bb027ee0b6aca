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

#include "result.hpp"

namespace kforge {

struct Observation {
  std::size_t index = 0;  ///< position in the space
  bool ok = false;
  double median_ms = 0.0;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  /// The next configuration to evaluate; nullopt when the strategy is done.
  virtual std::optional<std::size_t> next(const std::vector<Observation>& history) = 0;
};

/// "exhaustive" (space order) or "random" (a seeded permutation). Both
/// propose `first` (the default configuration) before anything else.
Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, std::size_t space_size,
                                                std::size_t first, std::uint64_t seed);

/// Names make_strategy accepts.
std::vector<std::string> strategy_names();

/// splitmix64: a small portable generator whose output is the same everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, n), n > 0 (rejection sampling, no modulo bias).
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t s_;
};

}  // namespace kforge
