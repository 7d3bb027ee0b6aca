// moved_counters and moves_text.
#include "report/counter_moves.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace kforge::report {
namespace {

using Key = std::pair<std::string, std::string>;  // collector, name

std::map<Key, const CounterRecord*> measured(const std::vector<CounterRecord>& rows) {
  std::map<Key, const CounterRecord*> out;
  for (const CounterRecord& r : rows) {
    if (r.value && r.source != "unavailable" && r.source != "model") out[{r.collector, r.name}] = &r;
  }
  return out;
}

/// How far a move is outside its band, to order moves across units.
double severity(const CounterMove& m) {
  return m.unit == "%" ? std::abs(m.change) / kCounterNoisePoints : std::abs(m.change) / kCounterNoise;
}

}  // namespace

std::vector<CounterMove> moved_counters(const std::vector<CounterRecord>& before,
                                        const std::vector<CounterRecord>& after) {
  const auto old_rows = measured(before), new_rows = measured(after);
  std::vector<CounterMove> moves;
  for (const auto& [key, was] : old_rows) {
    const auto it = new_rows.find(key);
    if (it == new_rows.end()) continue;
    CounterMove m{key.first, key.second, was->unit, *was->value, *it->second->value, 0};
    if (m.unit == "%") {
      m.change = m.after - m.before;
      if (std::abs(m.change) <= kCounterNoisePoints) continue;
    } else {
      if (m.before == 0 && m.after == 0) continue;
      m.change = m.before == 0 ? INFINITY : m.after / m.before - 1;
      if (std::abs(m.change) <= kCounterNoise) continue;
    }
    moves.push_back(std::move(m));
  }
  std::stable_sort(moves.begin(), moves.end(),
                   [](const CounterMove& a, const CounterMove& b) { return severity(a) > severity(b); });
  return moves;
}

std::string moves_text(const std::vector<CounterMove>& moves, std::size_t n) {
  std::string out;
  char buf[160];
  for (std::size_t i = 0; i < moves.size() && i < n; ++i) {
    const CounterMove& m = moves[i];
    if (m.unit == "%") {
      std::snprintf(buf, sizeof buf, "%s %+.1f points", m.name.c_str(), m.change);
    } else {
      std::snprintf(buf, sizeof buf, "%s %+.0f%% (%.3g -> %.3g%s%s)", m.name.c_str(), m.change * 100,
                    m.before, m.after, m.unit.empty() ? "" : " ", m.unit.c_str());
    }
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  return out;
}

}  // namespace kforge::report
