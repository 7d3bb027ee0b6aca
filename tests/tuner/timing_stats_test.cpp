// Percentile summaries of timed repetitions.
#include <catch2/catch.hpp>

#include "tuner/measure/timing_stats.hpp"

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

TEST_CASE("even count median interpolates, empty is zero", "[timing]") {
  CHECK(TimingStats::from_samples({1, 2, 3, 4}).median_ms == Approx(2.5));
  auto e = TimingStats::from_samples({});
  CHECK(e.count == 0);
  CHECK(e.median_ms == 0);
}

TEST_CASE("median interval: binomial order statistics", "[timing]") {
  // n = 5: no 95% interval exists; [min, max] covers 1 - 2/32.
  auto five = median_interval({5, 1, 4, 2, 3});
  CHECK(five.low_ms == 1);
  CHECK(five.high_ms == 5);
  CHECK(five.coverage == Approx(1 - 2.0 / 32));
  // n = 6: [min, max] covers 1 - 2/64 = 0.969 >= 0.95; [x2, x5] would not.
  auto six = median_interval({6, 1, 5, 2, 4, 3});
  CHECK(six.low_ms == 1);
  CHECK(six.high_ms == 6);
  CHECK(six.coverage == Approx(1 - 2.0 / 64));
  // n = 20: the 95% interval is [x6, x15] (coverage 0.9586).
  std::vector<double> s;
  for (int i = 20; i >= 1; --i) s.push_back(i);
  auto twenty = median_interval(s);
  CHECK(twenty.low_ms == 6);
  CHECK(twenty.high_ms == 15);
  CHECK(twenty.coverage == Approx(0.9586).epsilon(1e-3));
  CHECK(twenty.coverage >= 0.95);
  CHECK(median_interval({}).coverage == 0);
}

TEST_CASE("two timings are within noise when their medians' intervals overlap", "[timing]") {
  const auto a = TimingStats::from_samples({10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6});
  const auto b = TimingStats::from_samples({10.5, 10.6, 10.7, 10.8, 10.9, 11.0, 11.1});
  const auto c = TimingStats::from_samples({12.0, 12.1, 12.2, 12.3, 12.4, 12.5, 12.6});
  CHECK(within_noise(a, b));
  CHECK(within_noise(b, a));
  CHECK_FALSE(within_noise(a, c));
  CHECK_FALSE(within_noise(c, b));
  CHECK_FALSE(within_noise(a, TimingStats{}));  // no samples: nothing to compare
}

TEST_CASE("every timing stop reads back from its word, and no other word reads", "[timing]") {
  for (TimingStop stop : {TimingStop::kNone, TimingStop::kMaxReps, TimingStop::kCi, TimingStop::kOutsideWindow,
                          TimingStop::kBudget, TimingStop::kCut, TimingStop::kRejected, TimingStop::kRaced,
                          TimingStop::kInterleaved}) {
    INFO(name(stop));
    CHECK(timing_stop_named(name(stop)) == stop);
  }
  CHECK(name(TimingStop::kNone).empty());
  CHECK(name(TimingStop::kOutsideWindow) == "outside_window");
  CHECK_FALSE(timing_stop_named("precision").has_value());
  CHECK_FALSE(timing_stop_named("CI").has_value());
}
