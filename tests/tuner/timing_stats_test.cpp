// Percentile summaries of timed repetitions.
#include <catch2/catch.hpp>

#include "timing_stats.hpp"

using namespace kforge;

TEST_CASE("stats of known samples", "[timing]") {
  auto s = TimingStats::from_samples({5, 1, 4, 2, 3});
  CHECK(s.count == 5);
  CHECK(s.median_ms == Approx(3));
  CHECK(s.min_ms == 1);
  CHECK(s.max_ms == 5);
  CHECK(s.p20_ms == Approx(1.8));
  CHECK(s.p80_ms == Approx(4.2));
  CHECK(s.samples_ms == std::vector<double>{5, 1, 4, 2, 3});  // order kept
}

TEST_CASE("even count median interpolates; empty is zero", "[timing]") {
  CHECK(TimingStats::from_samples({1, 2, 3, 4}).median_ms == Approx(2.5));
  auto e = TimingStats::from_samples({});
  CHECK(e.count == 0);
  CHECK(e.median_ms == 0);
}
