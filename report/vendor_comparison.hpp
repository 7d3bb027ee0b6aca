// Per tuned problem, kforge's best kernel against the best library candidate
// (a vendor library: CLBlast, cuBLASLt, hipBLASLt) and their ratio: what
// show, report, compare and capabilities print (docs/vendor-libraries.md).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/records.hpp"
#include "db/tuning_set.hpp"
#include "runtime/catalog/template_catalog.hpp"

namespace kforge::report {

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

/// The same for a tuning set (report, compare, capabilities): a library
/// template is one whose stored manifest names a `library`, so a set read
/// anywhere tells them apart without the templates that tuned it.
std::vector<VendorComparison> compare_vendor(const TuningSet& set);

/// Only the rows with a library side: what the reports print.
std::vector<VendorComparison> with_library(std::vector<VendorComparison> rows);

/// The core of both: `is_library(template name, template hash)` tells the sides apart.
std::vector<VendorComparison> compare_vendor(
    const std::vector<WinnerRecord>& winners,
    const std::function<bool(const std::string&, const std::string&)>& is_library);

}  // namespace kforge::report
