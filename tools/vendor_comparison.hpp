// Per tuned problem, kforge's best kernel against the best library candidate
// (a vendor library: CLBlast, cuBLASLt, hipBLASLt) and their ratio: what
// show, report, compare and capabilities print (docs/vendor-libraries.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "records.hpp"
#include "template_catalog.hpp"

namespace kforge {

/// One entry's side of the comparison; empty `template_name` when none.
struct ComparedEntry {
  std::string template_name, config;
  double median_ms = 0;
};

struct VendorComparison {
  std::string device_key, problem_key;
  ComparedEntry kernel;   ///< the fastest winner of a kernel template
  ComparedEntry library;  ///< the fastest winner of a library template
  /// kernel median / library median: above 1 the library is faster; 0 unless both exist.
  double ratio = 0;
  /// "kernel", "library", or "" when only one side was tuned.
  std::string faster;
  nlohmann::json to_json() const;
};

/// One row per (device, problem) in `winners` with at least one side,
/// in the order first seen. A template the catalog does not know counts as
/// a kernel (a user template of an earlier run).
std::vector<VendorComparison> compare_vendor(const std::vector<WinnerRecord>& winners,
                                             const TemplateCatalog& catalog);

}  // namespace kforge
