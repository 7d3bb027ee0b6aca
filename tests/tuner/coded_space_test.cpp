// The coded space and what the model strategy computes from it a row at a
// time: the same neighbors and features as the whole-table functions, and a
// model that searches a space too large to weigh whole.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "tuner/search/coded_space.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_features.hpp"

using namespace kforge;

namespace {

/// 4 x 5 x 3 configurations minus a diagonal, a constant column and a column with zeros.
SpaceFeatures small_table() {
  SpaceFeatures raw;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < 3; ++c) {
        if ((a + b + c) % 5 == 4) continue;
        raw.push_back({double(8 << a), double(b), 7.0, double(c * c + 1)});
      }
  return raw;
}

}  // namespace

TEST_CASE("a coded space finds its configurations and their one-parameter neighbors", "[strategy]") {
  const SpaceFeatures raw = small_table();
  const CodedSpace space = CodedSpace::from_features(raw);
  REQUIRE(space.size() == raw.size());
  REQUIRE(space.dims() == 4);
  CHECK(space.values(2).size() == 1);
  const auto whole = one_parameter_neighbors(raw);
  for (std::size_t i = 0; i < raw.size(); ++i) {
    for (std::size_t d = 0; d < 4; ++d) CHECK(space.value(i, d) == raw[i][d]);
    std::vector<std::uint16_t> row;
    for (std::size_t d = 0; d < 4; ++d) row.push_back(space.code(i, d));
    CHECK(space.find(row.data()) == i);
    CHECK(space.neighbors(i) == whole[i]);
  }
  // a = 0, b = 4, c = 0 is off the table: (0 + 4 + 0) % 5 == 4.
  const std::vector<std::uint16_t> absent = {0, 4, 0, 0};
  CHECK_FALSE(space.find(absent.data()).has_value());
}

TEST_CASE("derived feature rows are derived_features a row at a time", "[strategy]") {
  const SpaceFeatures raw = small_table();
  const SpaceFeatures whole = derived_features(raw);
  const CodedSpace space = CodedSpace::from_features(raw);
  const DerivedFeatureRows rows(space);
  REQUIRE(rows.width() == whole[0].size());
  for (std::size_t i = 0; i < raw.size(); ++i) CHECK(rows.row(i) == whole[i]);
}

TEST_CASE("the model searches a space too large to weigh whole, never repeating", "[strategy]") {
  // 9^5 = 59,049 configurations: a bowl with its minimum at codes (6, 2, 5, 3, 7).
  std::vector<std::vector<double>> values(5);
  for (auto& v : values) {
    for (int k = 0; k < 9; ++k) v.push_back(std::ldexp(1.0, k));
  }
  const std::size_t n = 59049;
  std::vector<std::uint16_t> codes(n * 5);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    for (std::size_t d = 0; d < 5; ++d, rest /= 9) codes[i * 5 + d] = static_cast<std::uint16_t>(rest % 9);
  }
  const CodedSpace space(values, codes);
  const int centre[5] = {6, 2, 5, 3, 7};
  auto time_of = [&](std::size_t i) {
    double t = 1;
    for (std::size_t d = 0; d < 5; ++d) t += 0.1 * std::pow(space.code(i, d) - centre[d], 2.0);
    return t;
  };
  auto fraction = [&](const char* name, std::uint64_t seed) {
    auto s = make_strategy(name, CodedSpace(values, codes), std::vector<std::size_t>{0}, seed).value();
    std::vector<Observation> history;
    std::set<std::size_t> seen;
    double best = 1e300;
    while (history.size() < 100) {
      const auto i = s->next(history);
      REQUIRE(i);
      REQUIRE(seen.insert(*i).second);
      history.push_back({*i, true, time_of(*i)});
      best = std::min(best, time_of(*i));
    }
    return 1.0 / best;
  };
  // The model, choosing among sampled candidates, beats random search by far.
  double model = 0, random = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    model += fraction("model", seed) / 3;
    random += fraction("random", seed) / 3;
  }
  CHECK(model > 0.9);
  CHECK(model > random + 0.2);
}
