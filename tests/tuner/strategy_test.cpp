// Strategies: coverage, default first, determinism per seed; what the
// model-based strategy sees (derived features, initial design, neighbors).
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_default.hpp"
#include "tuner/search/strategy_features.hpp"

using namespace kforge;

static std::vector<std::size_t> drain(Strategy& s) {
  std::vector<std::size_t> out;
  std::vector<Observation> history;
  while (auto i = s.next(history)) {
    out.push_back(*i);
    history.push_back({*i, true, 1.0});
  }
  return out;
}

TEST_CASE("exhaustive visits every configuration once, default first", "[strategy]") {
  auto s = make_strategy("exhaustive", 10, 4, 1).value();
  auto order = drain(*s);
  REQUIRE(order.size() == 10);
  CHECK(order.front() == 4);
  CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == 10);
}

TEST_CASE("random is a seeded permutation with the default first", "[strategy]") {
  auto a = drain(*make_strategy("random", 50, 7, 123).value());
  auto b = drain(*make_strategy("random", 50, 7, 123).value());
  auto c = drain(*make_strategy("random", 50, 7, 124).value());
  REQUIRE(a.size() == 50);
  CHECK(a.front() == 7);
  CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == 50);
  CHECK(a == b);
  CHECK(a != c);
  std::vector<std::size_t> sorted(a.begin() + 1, a.end());
  CHECK_FALSE(std::is_sorted(sorted.begin(), sorted.end()));
}

TEST_CASE("fixed-order strategies announce their next proposals, adaptive ones do not", "[strategy]") {
  for (const char* name : {"exhaustive", "random"}) {
    INFO(name);
    auto s = make_strategy(name, 30, 7, 5);
    REQUIRE(s.ok());
    std::vector<Observation> history;
    auto first = (*s)->next(history);
    REQUIRE(first);
    history.push_back({*first, true, 1.0});
    const auto ahead = (*s)->upcoming(10);
    REQUIRE(ahead.size() == 10);
    for (std::size_t expected : ahead) {
      auto i = (*s)->next(history);
      REQUIRE(i);
      CHECK(*i == expected);
      history.push_back({*i, true, 1.0});
    }
    drain(**s);
    CHECK((*s)->upcoming(4).empty());
  }
  for (const char* name : {"annealing", "model"}) {
    auto s = make_strategy(name, 30, 7, 5);
    REQUIRE(s.ok());
    CHECK((*s)->upcoming(4).empty());
  }
}

TEST_CASE("a fixed order is the same whatever comes first, adaptive strategies have none", "[strategy]") {
  SpaceFeatures features(30);
  for (std::size_t i = 0; i < features.size(); ++i) features[i] = {static_cast<double>(i)};
  for (const char* name : {"exhaustive", "random"}) {
    INFO(name);
    auto plain = make_strategy(name, features, std::vector<std::size_t>{7}, 5).value();
    auto warm = make_strategy(name, features, std::vector<std::size_t>{7, 21, 3}, 5).value();
    const auto base = plain->base_order();
    REQUIRE(base.size() == 30);
    CHECK(std::set<std::size_t>(base.begin(), base.end()).size() == 30);
    CHECK(warm->base_order() == base);
    // The proposals are that order with the firsts moved to the front.
    auto order = drain(*warm);
    CHECK(std::vector<std::size_t>(order.begin(), order.begin() + 3) == std::vector<std::size_t>{7, 21, 3});
    std::vector<std::size_t> rest;
    for (std::size_t i : base) {
      if (i != 7 && i != 21 && i != 3) rest.push_back(i);
    }
    CHECK(std::vector<std::size_t>(order.begin() + 3, order.end()) == rest);
  }
  for (const char* name : {"annealing", "model"}) {
    CHECK(make_strategy(name, 30, 7, 5).value()->base_order().empty());
  }
}

TEST_CASE("a default outside the space is not proposed", "[strategy]") {
  auto order = drain(*make_strategy("exhaustive", 3, 3, 1).value());
  CHECK(order == std::vector<std::size_t>{0, 1, 2});
}

TEST_CASE("warm starts come right after the default, each once, those in the space only", "[strategy]") {
  SpaceFeatures features;
  for (int a = 0; a < 6; ++a) {
    for (int b = 0; b < 5; ++b) features.push_back({static_cast<double>(1 << a), static_cast<double>(b)});
  }
  const std::vector<std::size_t> firsts = {7, 12, 7, 99, 3};  // a repeat and one outside the 30
  for (const auto& name : strategy_names()) {
    INFO(name);
    auto s = make_strategy(name, features, firsts, 5).value();
    const auto order = drain(*s);
    REQUIRE(order.size() >= 3);
    CHECK(std::vector<std::size_t>(order.begin(), order.begin() + 3) == std::vector<std::size_t>{7, 12, 3});
    CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == order.size());
    CHECK(drain(*make_strategy(name, features, firsts, 5).value()) == order);  // deterministic
  }
  // The design still explores beyond them: at least one more before the model or the walk starts.
  SplitMix64 rng(3);
  const auto design = initial_design(parameter_features(features), {7, 12, 3, 20, 25}, rng);
  CHECK(design.size() == 6);
}

TEST_CASE("unknown strategy is bad input", "[strategy]") {
  auto s = make_strategy("annealing-typo", 3, 0, 1);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == ErrorCode::kBadInput);
  CHECK_THAT(s.error().message, Catch::Contains("annealing-typo"));
}

TEST_CASE("splitmix64 is the same everywhere", "[strategy]") {
  SplitMix64 r(0);
  // Reference values of splitmix64 seeded with 0.
  CHECK(r.next() == 0xe220a8397b1dcdafull);
  CHECK(r.next() == 0x6e789e6aa1b965f4ull);
  for (int i = 0; i < 1000; ++i) CHECK(r.below(7) < 7);
}

// ---- adaptive strategies on a synthetic landscape -------------------------

namespace {

/// A 4-parameter space (6 x 6 x 5 x 4 = 720 points, some removed as
/// "invalid") with a known unique optimum, a smooth basin, a deceptive local
/// minimum far from it, and failing configurations.
struct Landscape {
  SpaceFeatures features;
  std::vector<double> time_ms;  ///< <= 0: the candidate fails
  std::size_t optimum = 0;

  Landscape() {
    for (int a = 0; a < 6; ++a)
      for (int b = 0; b < 6; ++b)
        for (int c = 0; c < 5; ++c)
          for (int d = 0; d < 4; ++d) {
            if ((a + b + c + d) % 11 == 10) continue;  // not in the space (constraint)
            const double basin = 0.15 * ((a - 4) * (a - 4) + (b - 1) * (b - 1) + 0.5 * (c - 3) * (c - 3)) +
                                 0.3 * (d - 2) * (d - 2);
            const double trap = (a == 0 && b == 5) ? -1.2 : 0.0;  // local minimum at the far corner
            double t = std::exp(basin + trap + 0.02 * ((a * 7 + b * 3 + c * 5 + d) % 4));
            if (a == 5 && c == 0) t = -1;  // failing candidates (e.g. compile errors)
            features.push_back({double(1 << a), double(16 * (b + 1)), double(c), double(d * d)});
            time_ms.push_back(t);
          }
    double best = 1e300;
    for (std::size_t i = 0; i < time_ms.size(); ++i) {
      if (time_ms[i] > 0 && time_ms[i] < best) {
        best = time_ms[i];
        optimum = i;
      }
    }
  }

  /// Optimum / fastest found by strategy `name` (seed `seed`, default first)
  /// within `budget` evaluations: the search-efficiency benchmark's measure.
  double fraction_reached(const char* name, std::uint64_t seed, std::size_t budget) const {
    auto s = make_strategy(name, features, 0, seed).value();
    std::vector<Observation> history;
    double fastest = 1e300;
    while (history.size() < budget) {
      auto i = s->next(history);
      if (!i) break;
      const double t = time_ms[*i];
      history.push_back({*i, t > 0, t > 0 ? t : 0.0});
      if (t > 0) fastest = std::min(fastest, t);
    }
    return time_ms[optimum] / fastest;
  }

  /// Evaluations the strategy needs to propose the optimum; 0 if it never does within `budget`.
  std::size_t evaluations_to_optimum(Strategy& s, std::size_t budget) const {
    std::vector<Observation> history;
    for (std::size_t n = 1; n <= budget; ++n) {
      auto i = s.next(history);
      if (!i) return 0;
      if (*i == optimum) return n;
      history.push_back({*i, time_ms[*i] > 0, time_ms[*i] > 0 ? time_ms[*i] : 0.0});
    }
    return 0;
  }
};

}  // namespace

TEST_CASE("the synthetic landscape has one optimum away from the default", "[strategy]") {
  Landscape l;
  CHECK(l.features.size() > 600);
  CHECK(l.optimum != 0);
  int ties = 0;
  for (double t : l.time_ms) ties += t == l.time_ms[l.optimum];
  CHECK(ties == 1);
}

TEST_CASE("every strategy finds the known optimum of a synthetic landscape", "[strategy]") {
  Landscape l;
  const std::size_t n = l.features.size();
  const std::size_t default_index = 0;
  // Full budget: every strategy that covers the space finds it.
  for (const auto& name : strategy_names()) {
    INFO(name);
    auto s = make_strategy(name, l.features, default_index, 7).value();
    CHECK(l.evaluations_to_optimum(*s, n) > 0);
  }
  // Adaptive strategies find it within a fraction of the space, for every seed tried.
  for (const char* name : {"annealing", "model"}) {
    const std::size_t budget = std::string(name) == "model" ? n / 10 : n / 3;
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      INFO(name << " seed " << seed << " budget " << budget);
      auto s = make_strategy(name, l.features, default_index, seed).value();
      CHECK(l.evaluations_to_optimum(*s, budget) > 0);
    }
  }
}

TEST_CASE("adaptive strategies never repeat, start at the default and are deterministic per seed",
          "[strategy]") {
  Landscape l;
  for (const char* name : {"annealing", "model"}) {
    INFO(name);
    auto run = [&](std::uint64_t seed) {
      auto s = make_strategy(name, l.features, 42, seed).value();
      std::vector<Observation> history;
      std::vector<std::size_t> order;
      while (auto i = s->next(history)) {
        order.push_back(*i);
        history.push_back({*i, l.time_ms[*i] > 0, l.time_ms[*i] > 0 ? l.time_ms[*i] : 0.0});
        if (order.size() == 120) break;
      }
      return order;
    };
    auto a = run(3), b = run(3), c = run(4);
    REQUIRE(a.size() == 120);
    CHECK(a.front() == 42);
    CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == a.size());
    CHECK(a == b);
    CHECK(a != c);
  }
}

// ---- what the model-based strategy sees -----------------------------------

TEST_CASE("derived features: scaled logs of varying columns, then pairwise log sums and differences",
          "[strategy]") {
  // Columns: a in {2, 4, 8}, a constant 5, b = 16 / a (so log a + log b is constant).
  const SpaceFeatures raw = {{2, 5, 8}, {4, 5, 4}, {8, 5, 2}};
  const auto f = derived_features(raw);
  REQUIRE(f.size() == 3);
  // log a and log b (scaled), log a - log b; the constant column and the
  // constant log sum are dropped.
  REQUIRE(f[0].size() == 3);
  CHECK(f[0] == std::vector<double>{0.0, 1.0, 0.0});
  CHECK(f[1] == std::vector<double>{0.5, 0.5, 0.5});
  CHECK(f[2] == std::vector<double>{1.0, 0.0, 1.0});
  CHECK(derived_features(raw) == f);
  // Zero values: log2(1 + v - min), still scaled to [0, 1].
  const auto z = derived_features({{0}, {1}, {3}});
  REQUIRE(z.size() == 3);
  CHECK(z[0][0] == 0.0);
  CHECK(z[1][0] == Approx(0.5));
  CHECK(z[2][0] == 1.0);
  // Nothing varies: one column of zeros, so a model still has a row to read.
  CHECK(derived_features({{4, 1}, {4, 1}}) == SpaceFeatures{{0.0}, {0.0}});
}

TEST_CASE("space-filling design starts at the default, spreads out and is deterministic per seed",
          "[strategy]") {
  SpaceFeatures line;
  for (int i = 0; i <= 10; ++i) line.push_back({i / 10.0});
  // Weighing every configuration: greedy maximin, the two ends after the middle.
  SplitMix64 rng(1);
  const auto d = space_filling_design(line, {5}, 3, 0, rng);
  REQUIRE(d.size() == 3);
  CHECK(d[0] == 5);
  CHECK(std::set<std::size_t>(d.begin() + 1, d.end()) == std::set<std::size_t>{0, 10});
  // Best of a few random candidates: no repeats, the default first, the
  // same design for the same seed and another for another seed.
  Landscape l;
  const auto f = derived_features(l.features);
  auto design = [&](std::uint64_t seed) {
    SplitMix64 r(seed);
    return space_filling_design(f, {42}, 8, 5, r);
  };
  const auto a = design(3);
  REQUIRE(a.size() == 8);
  CHECK(a.front() == 42);
  CHECK(std::set<std::size_t>(a.begin(), a.end()).size() == 8);
  CHECK(a == design(3));
  CHECK(a != design(4));
  // Spread: the design's closest pair is more than twice as far apart (squared)
  // as a random sample's, summed over seeds (about 3x here).
  auto closest = [&](const std::vector<std::size_t>& pts) {
    double m = 1e300;
    for (std::size_t i = 0; i < pts.size(); ++i)
      for (std::size_t j = i + 1; j < pts.size(); ++j) {
        double d2 = 0;
        for (std::size_t k = 0; k < f[0].size(); ++k) {
          const double dk = f[pts[i]][k] - f[pts[j]][k];
          d2 += dk * dk;
        }
        m = std::min(m, d2);
      }
    return m;
  };
  double spread_design = 0, spread_random = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    spread_design += closest(design(seed));
    SplitMix64 r(seed);
    std::vector<std::size_t> sample = {42};
    while (sample.size() < 8) {
      const auto j = static_cast<std::size_t>(r.below(f.size()));
      if (std::find(sample.begin(), sample.end(), j) == sample.end()) sample.push_back(j);
    }
    spread_random += closest(sample);
  }
  INFO("closest pairs: design " << spread_design << ", random " << spread_random);
  CHECK(spread_design > 2 * spread_random);
  // A space smaller than the design asked for is covered once, with either rule.
  SplitMix64 r0(1), r5(1);
  CHECK(space_filling_design(line, {0}, 50, 0, r0).size() == 11);
  CHECK(space_filling_design(line, {0}, 50, 5, r5).size() == 11);
}

TEST_CASE("one-parameter neighbors differ in exactly one column", "[strategy]") {
  const SpaceFeatures raw = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {3, 3}};
  const auto nb = one_parameter_neighbors(raw);
  CHECK(nb[0] == std::vector<std::size_t>{1, 2});
  CHECK(nb[3] == std::vector<std::size_t>{1, 2});
  CHECK(nb[4].empty());
}

TEST_CASE("the model-based strategy beats random search at 10% of a structured space", "[strategy]") {
  // Fraction of the optimum reached after 10% of the synthetic space, median
  // over seeds, for the model and for random search with the same seeds.
  Landscape l;
  const std::size_t budget = l.features.size() / 10;
  std::vector<double> model, random;
  for (std::uint64_t seed = 1; seed <= 15; ++seed) {
    model.push_back(l.fraction_reached("model", seed, budget));
    random.push_back(l.fraction_reached("random", seed, budget));
  }
  std::sort(model.begin(), model.end());
  std::sort(random.begin(), random.end());
  INFO("model median " << model[7] << ", random median " << random[7]);
  CHECK(model[7] >= 0.95);
  CHECK(model[7] > random[7]);
}

TEST_CASE("annealing walks from the best of its initial design and beats random search at 10%", "[strategy]") {
  Landscape l;
  const std::size_t default_index = 0;
  SplitMix64 rng(5);
  const auto design = initial_design(parameter_features(l.features), {default_index}, rng);
  REQUIRE(design.size() >= 4);
  // The design first, as the model strategy evaluates it; then a neighbor of its best.
  auto s = make_strategy("annealing", l.features, default_index, 5).value();
  std::vector<Observation> history;
  for (std::size_t k = 0; k < design.size(); ++k) {
    auto i = s->next(history);
    REQUIRE(i);
    CHECK(*i == design[k]);
    history.push_back({*i, l.time_ms[*i] > 0, l.time_ms[*i] > 0 ? l.time_ms[*i] : 0.0});
  }
  std::size_t best = design[0];
  for (std::size_t i : design) {
    if (l.time_ms[i] > 0 && (l.time_ms[best] <= 0 || l.time_ms[i] < l.time_ms[best])) best = i;
  }
  const auto step = s->next(history);
  REQUIRE(step);
  const auto neighbors = one_parameter_neighbors(l.features);
  CHECK(std::binary_search(neighbors[best].begin(), neighbors[best].end(), *step));

  // Fraction of the optimum reached after 10% of the space, median over seeds.
  const std::size_t budget = l.features.size() / 10;
  std::vector<double> annealing, random;
  for (std::uint64_t seed = 1; seed <= 15; ++seed) {
    annealing.push_back(l.fraction_reached("annealing", seed, budget));
    random.push_back(l.fraction_reached("random", seed, budget));
  }
  std::sort(annealing.begin(), annealing.end());
  std::sort(random.begin(), random.end());
  INFO("annealing median " << annealing[7] << ", random median " << random[7]);
  CHECK(annealing[7] > random[7]);
}

TEST_CASE("likely_next is a guess of the next proposals that never changes them", "[strategy]") {
  Landscape l;
  for (const char* name : {"exhaustive", "random", "annealing", "model"}) {
    INFO(name);
    auto asked = make_strategy(name, l.features, 42, 3).value();
    auto plain = make_strategy(name, l.features, 42, 3).value();
    std::vector<Observation> history;
    std::vector<std::size_t> guess;
    std::set<std::size_t> proposed;
    std::size_t hits = 0, steps = 0;
    while (history.size() < 120) {
      auto i = asked->next(history);
      auto j = plain->next(history);
      REQUIRE(i);
      REQUIRE(j);
      REQUIRE(*i == *j);  // asking changed nothing
      if (!history.empty()) {
        ++steps;
        hits += std::find(guess.begin(), guess.end(), *i) != guess.end();
      }
      proposed.insert(*i);
      guess = asked->likely_next(31);
      CHECK(guess.size() <= 31);
      CHECK(std::set<std::size_t>(guess.begin(), guess.end()).size() == guess.size());
      for (std::size_t g : guess) CHECK_FALSE(proposed.count(g));
      history.push_back({*i, l.time_ms[*i] > 0, l.time_ms[*i] > 0 ? l.time_ms[*i] : 0.0});
    }
    const double rate = static_cast<double>(hits) / static_cast<double>(steps);
    INFO("next proposal among the previous guess: " << hits << " of " << steps);
    if (std::string(name) == "model") {
      // The refit after the real outcome moves the bounds. Over seeds 1-8
      // here: 0.72-0.86 with greedy maximin over the derived features,
      // 0.73-0.83 over the parameters alone, 0.77-0.91 with the sampled
      // design; over the first 25% of the recorded landscapes the replay's
      // guesses held 94-100% of the proposals with any of them.
      CHECK(rate >= 0.7);
    } else {
      // Exact for fixed-order strategies; annealing's next step is one of a
      // few known draws, whatever the outcome.
      CHECK(rate >= 0.95);
    }
  }
}

TEST_CASE("adaptive strategies' guesses start with the rest of their design, in order", "[strategy]") {
  Landscape l;
  for (const char* name : {"annealing", "model"}) {
    INFO(name);
    auto s = make_strategy(name, l.features, 42, 9).value();
    std::vector<Observation> history;
    auto first = s->next(history);
    REQUIRE(first);
    history.push_back({*first, true, l.time_ms[*first] > 0 ? l.time_ms[*first] : 1.0});
    const auto guess = s->likely_next(3);
    REQUIRE(guess.size() == 3);
    for (std::size_t expected : guess) {
      auto i = s->next(history);
      REQUIRE(i);
      CHECK(*i == expected);
      history.push_back({*i, l.time_ms[*i] > 0, l.time_ms[*i] > 0 ? l.time_ms[*i] : 0.0});
    }
  }
}

TEST_CASE("without a named strategy, tune runs the one measured best at its budget", "[strategy]") {
  CHECK(default_strategy(0) == "random");  // the whole space: the order only
  CHECK(default_strategy(25) == "model");
  CHECK(default_strategy(20) == "model");
  CHECK(default_strategy(100) == "annealing");
  CHECK(default_strategy(1000) == "model");
}
