// Replays kforge's search strategies over a recorded landscape without a
// device: the landscape (configuration -> median ms, null when it failed)
// comes from a search_efficiency receipt, the strategies are the tuner's own
// (make_strategy), seeded the way `kforge tune` seeds them. Prints, per
// strategy, the median over seeds of optimum / best found after 5%, 10% and
// 25% of the space, like bench/search_efficiency.py, in milliseconds of CPU
// instead of minutes of PoCL: a tool to iterate on a strategy, not a receipt.
//
//   kforge_bench_strategy_replay RECEIPT.json [--seeds N] [--noise SIGMA] [--strategy NAME] [--trace K]
//                                [--warm-from OTHER.json]... [--guesses G] [--require F] [--match-orders]
//                                [--budgets B1,B2,...] [--json OUT.json]
//
// --budgets B1,B2,... scores after B1, B2, ... evaluations instead of after
// 5%, 10% and 25% of the space (the run stops at the largest); --require
// then takes one fraction per budget (or one for all) and exits 1 where a
// strategy's median falls below it at any budget. --json OUT.json writes
// every seed's fractions per budget and each strategy's time per proposal
// (next(), microseconds of CPU time) for bench/search_replay.py.
//
// --noise SIGMA multiplies every median by exp(SIGMA * z), z standard normal
// drawn per configuration and seed, to see how a strategy fares when the
// landscape is measured again (the default 0 replays it as recorded).
// --trace K prints the first 10% of the picks of seeds 1..K.
// --warm-from OTHER.json (repeatable) warm-starts every strategy as
// `kforge tune --warm-start` would from a database holding OTHER's problem:
// OTHER's fastest configuration, when it is in this space, is proposed right
// after the default, in the order the flags are given.
// --guesses G (default 31, what compile overlap asks for with 16 compile
// threads) counts how often each proposal was among the strategy's G guesses
// (Strategy::likely_next) of the turn before, over the first 25%: the share
// of compiles that can run ahead on a GPU's host.
// --match-orders exits 1, naming the strategy and seed, when a replayed
// strategy proposes otherwise than the receipt's own run of it recorded
// (noise 0 and no warm start only): the check that the replay is the tuner.
// --strategy default replays what `kforge tune` runs when no strategy is
// named, with an evaluation budget of the largest of --budgets.
// --require F exits 1, naming the strategy, when a strategy's median at 10%
// is below F: ctest replays the recorded landscapes on which the model
// meets the search goal (F = 0.95, 10 seeds) so that a change to a strategy
// that loses one fails there (tests/tuner/CMakeLists.txt).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "generator/config.hpp"
#include "tuner/measure/timing_stats.hpp"
#include "tuner/search/strategy.hpp"
#include "tuner/search/strategy_default.hpp"

using namespace kforge;

namespace {

/// "25,50,100" as numbers; an error names the flag and the text.
std::vector<double> parse_list(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    try {
      out.push_back(std::stod(text.substr(at, comma - at)));
    } catch (const std::exception&) {
      std::cerr << "kforge_bench_strategy_replay: " << flag << " " << text << ": not a list of numbers\n";
      std::exit(2);
    }
    at = comma + 1;
  }
  return out;
}

/// This thread's CPU time in microseconds (what a strategy spends, whatever
/// else a shared host runs).
double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: kforge_bench_strategy_replay RECEIPT.json [--seeds N] [--noise SIGMA] [--strategy NAME] "
                 "[--trace K] [--warm-from OTHER.json]... [--guesses G] [--require F] [--match-orders]\n";
    return 2;
  }
  int seeds = 10;
  double noise = 0.0;
  int trace_seeds = 0;
  std::size_t guesses = 31;
  std::vector<std::string> strategies = {"random", "annealing", "model"};
  std::vector<std::string> warm_from;
  std::vector<double> require;
  std::vector<double> budgets;  // evaluation counts; empty: fractions of the space
  std::string json_out;
  std::vector<std::string> short_of;  // strategies whose median is below `require`, and where
  std::vector<std::string> mismatched;  // strategy and seed whose proposals differ from the receipt's
  bool match_orders = false;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--match-orders") {
      match_orders = true;
      --i;  // takes no value
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "kforge_bench_strategy_replay: " << flag << " needs a value\n";
      return 2;
    }
    if (flag == "--seeds") seeds = std::stoi(argv[i + 1]);
    else if (flag == "--noise") noise = std::stod(argv[i + 1]);
    else if (flag == "--strategy") strategies = {argv[i + 1]};
    else if (flag == "--trace") trace_seeds = std::stoi(argv[i + 1]);
    else if (flag == "--guesses") guesses = static_cast<std::size_t>(std::stoul(argv[i + 1]));
    else if (flag == "--warm-from") warm_from.push_back(argv[i + 1]);
    else if (flag == "--require") require = parse_list(flag, argv[i + 1]);
    else if (flag == "--budgets") budgets = parse_list(flag, argv[i + 1]);
    else if (flag == "--json") json_out = argv[i + 1];
    else {
      std::cerr << "kforge_bench_strategy_replay: unknown flag " << flag << "\n";
      return 2;
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << argv[1] << ": cannot open\n";
    return 2;
  }
  const auto receipt = nlohmann::ordered_json::parse(in);
  const std::string template_name = "gemm_simt_tiled_search";
  // The default is what every strategy proposed first.
  std::vector<std::string> names;
  std::vector<double> base_ms;
  SpaceFeatures features;
  for (const auto& [name, ms] : receipt.at("landscape").items()) {
    auto cfg = Config::parse(name);
    if (!cfg.ok()) {
      std::cerr << argv[1] << ": landscape: " << cfg.error().message << "\n";
      return 2;
    }
    std::vector<double> row;
    for (const auto& [p, v] : cfg->values) row.push_back(static_cast<double>(v));
    features.push_back(std::move(row));
    names.push_back(name);
    base_ms.push_back(ms.is_null() ? -1.0 : ms.get<double>());
  }
  const std::string def = receipt.at("runs").at(0).at("order").at(0).get<std::string>();
  const std::size_t n = names.size();
  // The tuner's order is the space's: lexicographic in the declared order of
  // the parameters and of their values (SearchSpace::for_each), which the
  // receipt's context.space gives. The landscape itself is listed in the
  // order results were stored, which since batches are timed fastest first
  // is not the tuner's.
  if (!receipt.contains("context") || !receipt["context"].contains("space")) {
    std::cerr << argv[1] << ": no context.space: the tuner's order of the landscape is unknown\n";
    return 2;
  }
  {
    const auto& space = receipt["context"]["space"];
    std::vector<std::vector<std::size_t>> keys;  // each configuration's value positions, in declared order
    for (std::size_t i = 0; i < n; ++i) {
      const auto cfg = Config::parse(names[i]).value();
      std::vector<std::size_t> key;
      for (const auto& [param, values] : space.items()) {
        const auto it = cfg.values.find(param);
        std::size_t at = values.size();
        for (std::size_t v = 0; it != cfg.values.end() && v < values.size(); ++v) {
          if (values[v].get<double>() == static_cast<double>(it->second)) at = v;
        }
        key.push_back(at);
      }
      keys.push_back(std::move(key));
    }
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    std::vector<std::string> n2;
    std::vector<double> m2;
    SpaceFeatures f2;
    for (std::size_t i : order) {
      n2.push_back(names[i]);
      m2.push_back(base_ms[i]);
      f2.push_back(features[i]);
    }
    names.swap(n2);
    base_ms.swap(m2);
    features.swap(f2);
  }
  const std::size_t first =
      static_cast<std::size_t>(std::find(names.begin(), names.end(), def) - names.begin());
  std::vector<std::size_t> firsts = {first};
  for (const auto& path : warm_from) {
    std::ifstream other_in(path);
    if (!other_in) {
      std::cerr << path << ": cannot open\n";
      return 2;
    }
    const auto other = nlohmann::ordered_json::parse(other_in);
    std::string fastest;
    double fastest_ms = 1e300;
    for (const auto& [name, ms] : other.at("landscape").items()) {
      if (!ms.is_null() && ms.get<double>() < fastest_ms) {
        fastest_ms = ms.get<double>();
        fastest = name;
      }
    }
    const auto at = std::find(names.begin(), names.end(), fastest);
    std::printf("warm start from %s: %s%s\n", path.c_str(), fastest.c_str(),
                at == names.end() ? " (not in this space)" : "");
    if (at != names.end()) firsts.push_back(static_cast<std::size_t>(at - names.begin()));
  }
  // Where each strategy is scored: after these many evaluations.
  std::vector<std::size_t> counts;
  const std::vector<double> fractions = {0.05, 0.10, 0.25};
  for (double f : fractions) counts.push_back(static_cast<std::size_t>(std::ceil(f * static_cast<double>(n))));
  if (!budgets.empty()) {
    counts.clear();
    for (double b : budgets) counts.push_back(static_cast<std::size_t>(std::max(1.0, b)));
  }
  // "default": the strategy `kforge tune` runs at the largest budget.
  for (auto& s : strategies) {
    if (s == "default") s = default_strategy(budgets.empty() ? 0 : static_cast<int>(*std::max_element(counts.begin(), counts.end())));
  }
  const std::size_t scored_at = budgets.empty() ? 1 : 0;  // the 10% column, or every budget
  if (!require.empty() && require.size() != 1 && require.size() != counts.size()) {
    std::cerr << "kforge_bench_strategy_replay: --require takes one fraction or one per budget\n";
    return 2;
  }
  std::printf("%zu configurations, default %s, %d seeds, noise %.3f, scored after", n, def.c_str(), seeds, noise);
  for (std::size_t k : counts) std::printf(" %zu", k);
  std::printf(" evaluations\n");
  nlohmann::ordered_json report = {{"landscape", argv[1]}, {"configurations", n}, {"default", def},
                                   {"seeds", seeds}, {"evaluations", counts}, {"strategies", nlohmann::ordered_json::object()}};
  for (const auto& strategy : strategies) {
    std::vector<std::vector<double>> reached(counts.size());
    std::vector<double> proposal_us;
    int hits = 0;
    std::size_t guessed = 0, turns = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      std::vector<double> ms = base_ms;
      if (noise > 0) {
        SplitMix64 rng(0x5eed0000ull + static_cast<std::uint64_t>(seed));
        for (double& t : ms) {
          const double u1 = std::max(rng.uniform(), 1e-12), u2 = rng.uniform();
          const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
          if (t > 0) t *= std::exp(noise * z);
        }
      }
      double optimum = 1e300;
      for (double t : ms) {
        if (t > 0) optimum = std::min(optimum, t);
      }
      const auto tuner_seed = static_cast<std::uint64_t>(seed) ^ Hasher().add(template_name).value();
      auto s = make_strategy(strategy, features, firsts, tuner_seed);
      if (!s.ok()) {
        std::cerr << s.error().message << "\n";
        return 2;
      }
      std::vector<Observation> history;
      std::vector<double> trace;
      std::vector<std::string> picks;
      double best = 1e300;
      const std::size_t budget = *std::max_element(counts.begin(), counts.end());
      std::vector<std::size_t> guess;
      while (history.size() < budget) {
        const double started = cpu_us();
        auto i = (*s)->next(history);
        proposal_us.push_back(cpu_us() - started);
        if (!i) break;
        if (!history.empty()) {
          ++turns;
          guessed += std::find(guess.begin(), guess.end(), *i) != guess.end();
        }
        guess = (*s)->likely_next(guesses);
        const double t = ms[*i];
        history.push_back({*i, t > 0, t > 0 ? t : 0.0});
        if (t > 0) best = std::min(best, t);
        trace.push_back(best);
        picks.push_back(names[*i]);
        if (seed <= trace_seeds && history.size() <= static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(n)))) {
          std::printf("  seed %d #%zu %s %.3f\n", seed, history.size(), names[*i].c_str(), t > 0 ? optimum / t : 0.0);
        }
      }
      if (match_orders && noise == 0 && warm_from.empty()) {
        for (const auto& run : receipt.at("runs")) {
          if (run.at("strategy") != strategy || run.at("seed") != seed) continue;
          const auto recorded = run.at("order").get<std::vector<std::string>>();
          const std::size_t k = std::min(recorded.size(), picks.size());
          const auto at = std::mismatch(recorded.begin(), recorded.begin() + static_cast<std::ptrdiff_t>(k), picks.begin());
          if (at.first != recorded.begin() + static_cast<std::ptrdiff_t>(k)) {
            mismatched.push_back(strategy + " seed " + std::to_string(seed) + ": proposal " +
                                 std::to_string(at.first - recorded.begin() + 1) + " is " + *at.second +
                                 ", recorded " + *at.first);
          }
        }
      }
      for (std::size_t f = 0; f < counts.size(); ++f) {
        const double b = trace.empty() ? 1e300 : trace[std::min(counts[f], trace.size()) - 1];
        reached[f].push_back(b < 1e300 ? optimum / b : 0.0);
      }
      hits += reached[scored_at].back() >= 0.95;
    }
    std::printf("%-10s", strategy.c_str());
    std::vector<double> medians;
    for (auto& r : reached) {
      medians.push_back(median_of(r));
      std::printf("  %.3f", medians.back());
    }
    for (std::size_t f = 0; f < counts.size() && !require.empty(); ++f) {
      if (!budgets.empty() || f == scored_at) {
        const double want = require.size() == 1 ? require[0] : require[f];
        if (medians[f] < want) {
          short_of.push_back(strategy + " after " + std::to_string(counts[f]) + " evaluations: " +
                             std::to_string(medians[f]) + " < " + std::to_string(want));
        }
      }
    }
    std::vector<double> sorted_us = proposal_us;
    std::sort(sorted_us.begin(), sorted_us.end());
    double total_us = 0;
    for (double u : proposal_us) total_us += u;
    report["strategies"][strategy] = {
        {"median", medians},
        {"per_seed", reached},
        {"proposal_us", {{"mean", proposal_us.empty() ? 0.0 : total_us / static_cast<double>(proposal_us.size())},
                         {"median", median_of(sorted_us)},
                         {"max", sorted_us.empty() ? 0.0 : sorted_us.back()},
                         {"count", proposal_us.size()}}}};
    std::printf("   (10%%: %d/%d seeds >= 0.95; guessed %.0f%% of %zu proposals)\n", hits, seeds,
                turns ? 100.0 * static_cast<double>(guessed) / static_cast<double>(turns) : 0.0, turns);
  }
  for (const auto& what : short_of) {
    std::fprintf(stderr, "%s: %s reaches less of the optimum than required (median over %d seeds)\n", argv[1],
                 what.c_str(), seeds);
  }
  if (!json_out.empty()) {
    std::ofstream out(json_out);
    out << report.dump(1) << "\n";
    if (!out) {
      std::cerr << json_out << ": cannot write\n";
      return 2;
    }
  }
  for (const auto& what : mismatched) {
    std::fprintf(stderr, "%s: %s\n", argv[1], what.c_str());
  }
  return short_of.empty() && mismatched.empty() ? 0 : 1;
}
