// The strategy factory, the fixed-order strategies (exhaustive, random) and
// the portable random generator.
#include "tuner/search/strategy.hpp"

#include <algorithm>
#include <numeric>

#include "tuner/search/search_strategies.hpp"

namespace kforge {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t SplitMix64::below(std::uint64_t n) {
  const std::uint64_t limit = ~0ull - (~0ull % n);
  std::uint64_t x;
  do x = next();
  while (x >= limit);
  return x % n;
}

namespace {

/// Walks a fixed order, `firsts` moved to the front.
class OrderedStrategy final : public Strategy {
 public:
  OrderedStrategy(std::string name, const std::vector<std::size_t>& order, const std::vector<std::size_t>& firsts)
      : name_(std::move(name)), base_(order) {
    order_.reserve(order.size());
    std::vector<bool> taken(order.size(), false);
    for (std::size_t f : firsts) {
      if (f < order.size() && !taken[f]) {
        order_.push_back(f);
        taken[f] = true;
      }
    }
    for (std::size_t i : order) {
      if (!taken[i]) order_.push_back(i);
    }
  }
  std::string_view name() const override { return name_; }
  const std::vector<std::size_t>& base_order() const override { return base_; }
  std::optional<std::size_t> next(const std::vector<Observation>&) override {
    if (pos_ >= order_.size()) return std::nullopt;
    return order_[pos_++];
  }
  std::vector<std::size_t> upcoming(std::size_t n) const override {
    const std::size_t end = std::min(order_.size(), pos_ + n);
    return {order_.begin() + static_cast<std::ptrdiff_t>(pos_), order_.begin() + static_cast<std::ptrdiff_t>(end)};
  }

 private:
  std::string name_;
  std::vector<std::size_t> base_;  ///< the order before the firsts moved
  std::vector<std::size_t> order_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<std::string> strategy_names() { return {"exhaustive", "random", "annealing", "model"}; }

Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, std::size_t space_size,
                                                std::size_t first, std::uint64_t seed) {
  SpaceFeatures features(space_size);
  for (std::size_t i = 0; i < space_size; ++i) features[i] = {static_cast<double>(i)};
  return make_strategy(name, features, first, seed);
}

Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, const SpaceFeatures& features,
                                                std::size_t first, std::uint64_t seed) {
  return make_strategy(name, features, std::vector<std::size_t>{first}, seed);
}

namespace {

/// The fixed-order strategies over a space of `space_size`; nullptr for another name.
std::unique_ptr<Strategy> make_ordered_strategy(std::string_view name, std::size_t space_size,
                                                const std::vector<std::size_t>& firsts, std::uint64_t seed) {
  if (name != "exhaustive" && name != "random") return nullptr;
  std::vector<std::size_t> order(space_size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (name == "exhaustive") return std::make_unique<OrderedStrategy>("exhaustive", order, firsts);
  SplitMix64 rng(seed);
  for (std::size_t i = order.size(); i > 1; --i) {  // Fisher-Yates
    std::swap(order[i - 1], order[rng.below(i)]);
  }
  return std::make_unique<OrderedStrategy>("random", order, firsts);
}

Error unknown_strategy(std::string_view name) {
  return Error::bad_input("unknown strategy '" + std::string(name) +
                          "' (expected exhaustive, random, annealing or model)");
}

}  // namespace

Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, const SpaceFeatures& features,
                                                const std::vector<std::size_t>& firsts, std::uint64_t seed) {
  if (name == "annealing") return make_annealing_strategy(features, firsts, seed);
  if (name == "model") return make_model_strategy(features, firsts, seed);
  if (auto ordered = make_ordered_strategy(name, features.size(), firsts, seed)) return ordered;
  return unknown_strategy(name);
}

Result<std::unique_ptr<Strategy>> make_strategy(std::string_view name, CodedSpace space,
                                                const std::vector<std::size_t>& firsts, std::uint64_t seed) {
  if (name == "model") return make_model_strategy(std::move(space), firsts, seed);
  if (name == "annealing") {
    SpaceFeatures features(space.size());
    for (std::size_t i = 0; i < space.size(); ++i) {
      for (std::size_t d = 0; d < space.dims(); ++d) features[i].push_back(space.value(i, d));
    }
    return make_annealing_strategy(features, firsts, seed);
  }
  if (auto ordered = make_ordered_strategy(name, space.size(), firsts, seed)) return ordered;
  return unknown_strategy(name);
}

}  // namespace kforge
