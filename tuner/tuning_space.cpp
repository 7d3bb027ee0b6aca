// A bounded tuning space: one walk, bounded in configurations kept and in
// steps, takes a small valid space whole; a large one is
// sampled (rejection sampling, SearchSpace::sample) or, for the exhaustive
// strategy under a budget, cut to the budget's length of its order.
#include "tuner/tuning_space.hpp"

#include <algorithm>
#include <set>

#include "generator/cartesian_size.hpp"
#include "tuner/search/strategy.hpp"

namespace kforge {

namespace {

/// "more than N valid configurations (cartesian size C)" for a large space.
std::string size_text(const SearchSpace& space, const EnumerationStats& count, const TuningSpaceLimits& limits) {
  const std::string cartesian = cartesian_size(space.manifest()).decimal;
  const std::string valid = count.valid > limits.max_walked
                                ? "more than " + std::to_string(limits.max_walked) + " valid configurations"
                                : "a valid space not counted within " + std::to_string(limits.max_nodes) + " steps";
  return valid + " (cartesian size " + cartesian + ")";
}

/// Adds `c` unless it is in already.
struct Pool {
  std::vector<Config> configs;
  std::set<std::string> names;
  bool add(Config c) {
    if (!names.insert(c.canonical_name()).second) return false;
    configs.push_back(std::move(c));
    return true;
  }
};

Result<TuningSpace> budget_prefix(const SearchSpace& space, int max_evals, const std::string& size) {
  const auto& m = space.manifest();
  if (max_evals <= 0) {
    return Error::bad_input(m.path + ": template " + m.name + " has " + size + " on " + space.problem().key() +
                            ": too many for --strategy exhaustive to walk; use --strategy random, annealing or "
                            "model, which sample it, or give --max-evals");
  }
  TuningSpace out;
  out.whole = false;
  const auto budget = static_cast<std::size_t>(max_evals);
  KF_TRY(space.for_each([&](const Config& c) {
    out.configs.push_back(c);
    return out.configs.size() < budget;
  }));
  // The default leads the exhaustive order wherever it stands in the space.
  const Config def = m.default_config();
  if (std::find(out.configs.begin(), out.configs.end(), def) == out.configs.end()) {
    KF_TRY_ASSIGN(valid, space.is_valid(def));
    if (valid) out.configs.push_back(def);
  }
  out.note = m.name + ": " + size + "; the exhaustive order's first " + std::to_string(budget);
  return out;
}

Result<TuningSpace> uniform_sample(const SearchSpace& space, std::string_view strategy, int max_evals,
                                   const std::vector<Config>& firsts, std::uint64_t seed, const std::string& size,
                                   const TuningSpaceLimits& limits) {
  Pool pool;
  for (const Config& f : firsts) {
    KF_TRY_ASSIGN(valid, space.is_valid(f));
    if (valid) pool.add(f);
  }
  // Local moves for the adaptive strategies start where they start.
  if (strategy == "annealing" || strategy == "model") {
    const std::vector<Config> starts = pool.configs;
    for (const Config& f : starts) {
      KF_TRY_ASSIGN(near, space.neighbors(f));
      for (Config& n : near) pool.add(std::move(n));
    }
  }
  const std::size_t wanted = std::max<std::size_t>(limits.sample_size, max_evals > 0 ? max_evals : 0);
  SplitMix64 rng(seed ^ 0x5a3c9e1f7b2d4681ull);
  const UniformBelow below = [&](std::uint64_t n) { return rng.below(n); };
  std::size_t drawn = 0;
  std::string stopped;
  // Duplicates are rare in a large space; the attempt bound ends a space whose
  // valid configurations are too few to give `wanted` distinct ones.
  for (std::size_t attempt = 0; drawn < wanted && attempt < 4 * wanted; ++attempt) {
    auto c = space.sample(below, limits.max_tries);
    if (!c) {
      if (pool.configs.empty()) {
        return Error{c.error().code, c.error().message + " (" + size + "); loosen the constraints or declare fewer values", {}};
      }
      stopped = "; sampling stopped: " + c.error().message;
      break;
    }
    if (pool.add(std::move(c).value())) ++drawn;
  }
  TuningSpace out;
  out.whole = false;
  out.configs = std::move(pool.configs);
  out.note = space.manifest().name + ": " + size + "; " + std::to_string(drawn) + " drawn uniformly" +
             (out.configs.size() > drawn ? ", after the default, warm starts and their neighbors" : "") + stopped;
  return out;
}

}  // namespace

Result<TuningSpace> make_tuning_space(const SearchSpace& space, std::string_view strategy, int max_evals,
                                      const std::vector<Config>& firsts, std::uint64_t seed,
                                      const TuningSpaceLimits& limits) {
  // One bounded walk keeps what it visits: a small space is then whole
  // (in enumerate()'s order) without being walked a second time.
  TuningSpace whole;
  KF_TRY_ASSIGN(count, space.for_each(
                           [&](const Config& c) {
                             if (whole.configs.size() >= limits.max_walked) return false;
                             whole.configs.push_back(c);
                             return true;
                           },
                           limits.max_nodes));
  if (count.complete) return whole;
  whole.configs.clear();
  const std::string size = size_text(space, count, limits);
  if (strategy == "exhaustive") return budget_prefix(space, max_evals, size);
  return uniform_sample(space, strategy, max_evals, firsts, seed, size, limits);
}

}  // namespace kforge
