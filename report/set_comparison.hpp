// `kforge compare`'s model: two tuning sets matched per (device, problem),
// each side's fastest winner, and the verdict of timing_compare.hpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "db/tuning_set.hpp"
#include "report/counter_moves.hpp"
#include "report/timing_compare.hpp"
#include "report/vendor_comparison.hpp"

namespace kforge::report {

struct ComparisonSide {
  const ResultRecord* result = nullptr;  ///< the winner used (nullptr: none)
  std::size_t evaluated = 0;             ///< results of this (device, problem) in the set
};

struct ComparisonRow {
  std::string device_key, device_name, arch;
  std::string problem_key, op, dtype, layout;
  ComparisonSide base, neu;
  std::optional<TimingComparison> timing;  ///< when both sides have a winner
  /// faster, slower, same; failed (new has results but none ok); only_base,
  /// only_new (not tuned on the other side).
  std::string verdict;
  /// Counters of the two winners that left their noise band (counter_moves.hpp).
  std::vector<CounterMove> moved_counters;
};

/// One set's kforge-against-library row (vendor_comparison.hpp).
struct VendorRow {
  std::string side;  ///< "base" or "new"
  std::string device_name;
  VendorComparison versus;
};

struct Comparison {
  std::string base_source, new_source;
  std::vector<ComparisonRow> rows;  ///< by device key, then problem key
  /// Per set, each tuned problem with a library result: base's rows, then new's.
  std::vector<VendorRow> vendor;
  int count(const std::string& verdict) const;
  /// True when a row is slower beyond noise or failed.
  bool regressed() const { return count("slower") + count("failed") > 0; }
};

/// Matches (device, problem) pairs across the sets. Each side's winner is
/// the fastest of its winners over every template version it holds.
Comparison compare_sets(const TuningSet& base, const TuningSet& neu);

std::string render_comparison_markdown(const Comparison& c);
nlohmann::json comparison_json(const Comparison& c);

}  // namespace kforge::report
