// Stop conditions: each alone, and composed.
#include <catch2/catch.hpp>

#include "tuner/search/stop_condition.hpp"

using namespace kforge;

TEST_CASE("stop conditions fire at their thresholds and compose", "[stop_condition][unit]") {
  SearchProgress p;
  auto evals = StopCondition::max_evaluations(10);
  auto time = StopCondition::time_budget(2.5);
  auto flat = StopCondition::no_improvement(4);
  CHECK_FALSE(StopCondition().check(p));
  CHECK_FALSE(StopCondition::max_evaluations(0).check({1000, 1e9, 1000}));

  p.evaluations = 9;
  CHECK_FALSE(evals.check(p));
  p.evaluations = 10;
  REQUIRE(evals.check(p));
  CHECK(*evals.check(p) == "10 evaluations");

  CHECK_FALSE(time.check({0, 2.4, 0}));
  CHECK(time.check({0, 2.5, 0}));
  CHECK_FALSE(flat.check({0, 0, 3}));
  CHECK(*flat.check({0, 0, 4}) == "no improvement in 4 evaluations");

  auto either = evals | time | flat;
  CHECK_FALSE(either.check({9, 2.0, 3}));
  CHECK(either.check({9, 2.6, 0}));
  CHECK(either.check({0, 0, 4}));
  auto both = evals & flat;
  CHECK_FALSE(both.check({10, 0, 3}));
  CHECK_FALSE(both.check({9, 0, 4}));
  CHECK(*both.check({10, 0, 4}) == "10 evaluations and no improvement in 4 evaluations");
}
