// Which hardware counters moved between two results of one configuration
// (an old and a new tuning set), for `compare` to name next to a time that
// moved (docs/profiling.md, "Moved counters"). One profiled launch has no
// spread of its own, so a counter's noise is a fixed band: 10 % of its value,
// or 5 points for a percentage.
#pragma once

#include <string>
#include <vector>

#include "db/records.hpp"

namespace kforge::report {

inline constexpr double kCounterNoise = 0.10;       ///< relative band of a count
inline constexpr double kCounterNoisePoints = 5.0;  ///< band of a percentage, in points

struct CounterMove {
  std::string collector, name, unit;
  double before = 0, after = 0;
  double change = 0;  ///< after / before - 1, or the points moved for a percentage
};

/// Counters read by the same collector on both sides whose value left the
/// noise band, largest move first; model rows and unavailable rows never move.
std::vector<CounterMove> moved_counters(const std::vector<CounterRecord>& before,
                                        const std::vector<CounterRecord>& after);

/// "dram__bytes_read.sum +42% (1.8e+08 -> 2.6e+08 byte), lts__t_sector_hit_rate.pct -12.3 points"
/// for the first `n` moves; empty when none.
std::string moves_text(const std::vector<CounterMove>& moves, std::size_t n = 3);

}  // namespace kforge::report
