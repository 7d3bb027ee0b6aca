// What a strategy costs against the size of the space: the time of a
// proposal (Strategy::next) and of a model update (one forest refit) on
// synthetic cartesian spaces of 10^3 to 10^7 configurations, after the same
// number of evaluations on each. Prints one JSON object; the outcome of a
// configuration is a smooth function of its parameters' logs, so the model
// has something to learn, and nothing here depends on a device. Times are
// this thread's CPU time, so a loaded host changes them little.
//
//   kforge_bench_strategy_cost [--sizes 1e3,1e4,...] [--history 100] [--proposals 50] [--strategy model]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/measure/timing_stats.hpp"
#include "tuner/search/coded_space.hpp"
#include "tuner/search/regression_forest.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_features.hpp"

using namespace kforge;
using Clock = std::chrono::steady_clock;

namespace {

/// This thread's CPU time in microseconds: on a shared host, what the
/// strategy itself spent, whatever else the cores ran.
double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

/// A cartesian space of about `target` configurations: seven parameters of
/// power-of-two values, the first ones given more values until the product
/// reaches the target.
CodedSpace cartesian_space(double target) {
  std::vector<std::size_t> counts(7, 1);
  double size = 1;
  for (std::size_t d = 0; size < target; d = (d + 1) % counts.size()) {
    size = size / static_cast<double>(counts[d]) * static_cast<double>(counts[d] + 1);
    ++counts[d];
  }
  std::vector<std::vector<double>> values(counts.size());
  for (std::size_t d = 0; d < counts.size(); ++d) {
    for (std::size_t v = 0; v < counts[d]; ++v) values[d].push_back(std::ldexp(1.0, static_cast<int>(v)));
  }
  const auto n = static_cast<std::size_t>(size);
  std::vector<std::uint16_t> codes(n * counts.size());
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t rest = i;
    for (std::size_t d = 0; d < counts.size(); ++d) {
      codes[i * counts.size() + d] = static_cast<std::uint16_t>(rest % counts[d]);
      rest /= counts[d];
    }
  }
  return CodedSpace(std::move(values), std::move(codes));
}

/// A smooth landscape: a bowl in the codes with its minimum inside the space.
double time_of(const CodedSpace& space, std::size_t i) {
  double t = 1.0;
  for (std::size_t d = 0; d < space.dims(); ++d) {
    const double centre = 0.6 * static_cast<double>(space.values(d).size() - 1);
    const double x = static_cast<double>(space.code(i, d)) - centre;
    t += 0.05 * x * x * static_cast<double>(d + 1);
  }
  return t;
}

nlohmann::json stats(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  return {{"median_us", median_of(us)}, {"p90_us", us.empty() ? 0.0 : us[us.size() * 9 / 10]},
          {"max_us", us.empty() ? 0.0 : us.back()}, {"count", us.size()}};
}

nlohmann::json measure(const std::string& strategy, double target, std::size_t history_size, std::size_t proposals) {
  const auto built = Clock::now();
  CodedSpace space = cartesian_space(target);
  const double build_s = micros_since(built) / 1e6;
  const std::size_t n = space.size();
  // Kept for the update timing: the features the model fits on.
  CodedSpace copy = space;
  const auto started = Clock::now();
  auto s = make_strategy(strategy, std::move(space), {n / 2}, 1);
  if (!s.ok()) {
    std::cerr << s.error().message << "\n";
    std::exit(2);
  }
  const double construct_s = micros_since(started) / 1e6;
  std::vector<Observation> history;
  std::vector<double> proposal_us;
  while (history.size() < history_size + proposals) {
    const double t0 = cpu_us();
    const auto i = (*s)->next(history);
    const double us = cpu_us() - t0;
    if (!i) break;
    if (history.size() >= history_size) proposal_us.push_back(us);
    history.push_back({*i, true, time_of(copy, *i)});
  }
  // One model update: the forest refit on the history the last proposal saw.
  DerivedFeatureRows features(copy);
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const auto& o : history) {
    x.push_back(features.row(o.index));
    y.push_back(std::log(o.median_ms));
  }
  std::vector<double> update_us;
  for (int k = 0; k < 5; ++k) {
    RegressionForest forest;
    const double t0 = cpu_us();
    forest.fit(x, y, static_cast<std::uint64_t>(k));
    update_us.push_back(cpu_us() - t0);
  }
  return {{"configurations", n},          {"parameters", copy.dims()},       {"space_build_s", build_s},
          {"strategy_construct_s", construct_s}, {"history", history_size}, {"proposal", stats(proposal_us)},
          {"model_update", stats(update_us)}};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes = {1e3, 1e4, 1e5, 1e6, 1e7};
  std::size_t history = 100, proposals = 50;
  std::string strategy = "model";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--sizes") {
      sizes.clear();
      for (std::size_t at = 0; at <= value.size();) {
        const std::size_t comma = std::min(value.find(',', at), value.size());
        sizes.push_back(std::stod(value.substr(at, comma - at)));
        at = comma + 1;
      }
    } else if (flag == "--history") {
      history = std::stoul(value);
    } else if (flag == "--proposals") {
      proposals = std::stoul(value);
    } else if (flag == "--strategy") {
      strategy = value;
    } else {
      std::cerr << "kforge_bench_strategy_cost: unknown flag " << flag << "\n";
      return 2;
    }
  }
  nlohmann::json out = {{"strategy", strategy}, {"spaces", nlohmann::json::array()}};
  for (double size : sizes) {
    out["spaces"].push_back(measure(strategy, size, history, proposals));
    std::fprintf(stderr, "%s\n", out["spaces"].back().dump().c_str());
  }
  std::printf("%s\n", out.dump(1).c_str());
  return 0;
}
