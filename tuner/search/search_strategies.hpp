// The adaptive strategies behind make_strategy (strategy.hpp): simulated
// annealing and the tree-surrogate model. Internal to the tuner library.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "tuner/search/coded_space.hpp"
#include "tuner/search/strategy.hpp"

namespace kforge {

std::unique_ptr<Strategy> make_annealing_strategy(const SpaceFeatures& features,
                                                  const std::vector<std::size_t>& firsts, std::uint64_t seed);
std::unique_ptr<Strategy> make_model_strategy(const SpaceFeatures& features, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed);
std::unique_ptr<Strategy> make_model_strategy(CodedSpace space, const std::vector<std::size_t>& firsts,
                                              std::uint64_t seed);

/// The list a strategy's likely_next builds: at most `limit` configurations,
/// each once, none of those proposed already.
class Guesses {
 public:
  Guesses(const std::vector<bool>& proposed, std::size_t limit)
      : proposed_(proposed), listed_(proposed.size(), false), limit_(limit) {}
  void add(std::size_t j) {
    if (list_.size() < limit_ && !proposed_[j] && !listed_[j]) {
      listed_[j] = true;
      list_.push_back(j);
    }
  }
  std::vector<std::size_t> take() { return std::move(list_); }

 private:
  const std::vector<bool>& proposed_;
  std::vector<bool> listed_;
  std::size_t limit_;
  std::vector<std::size_t> list_;
};

/// Scores for a history: log(median) for ok outcomes; failures one unit of
/// log above the slowest ok one (or 0 when none is ok). Indexed like history.
std::vector<double> history_scores(const std::vector<Observation>& history);

}  // namespace kforge
