// Composable stop conditions of a search: a number of evaluations, a time
// budget, no improvement in N evaluations; combined with | (either) and
// & (both).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace kforge {

/// Where a search stands, as the tuner tracks it.
struct SearchProgress {
  std::size_t evaluations = 0;        ///< candidates considered so far (stored ones included)
  double elapsed_s = 0;               ///< since the search started
  std::size_t since_improvement = 0;  ///< evaluations since the best ok time last improved
};

class StopCondition {
 public:
  using Check = std::function<std::optional<std::string>(const SearchProgress&)>;

  /// Never stops (the search ends when the strategy has nothing left).
  StopCondition();
  /// Stops once `n` evaluations are done; n = 0 never stops.
  static StopCondition max_evaluations(std::size_t n);
  /// Stops once `seconds` have passed; 0 never stops.
  static StopCondition time_budget(double seconds);
  /// Stops after `n` evaluations in a row without a faster ok candidate; 0 never stops.
  static StopCondition no_improvement(std::size_t n);

  /// Stops when either stops.
  StopCondition operator|(const StopCondition& other) const;
  /// Stops when both would stop.
  StopCondition operator&(const StopCondition& other) const;

  /// Why the search should stop now ("10 evaluations"), or nullopt.
  std::optional<std::string> check(const SearchProgress& p) const { return check_(p); }

 private:
  explicit StopCondition(Check c) : check_(std::move(c)) {}
  Check check_;
};

}  // namespace kforge
