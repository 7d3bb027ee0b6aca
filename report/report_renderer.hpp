// `kforge report`'s page: a self-contained HTML file (inline CSS and SVG, no
// script, no network) with one section per tuned (device, problem). The
// charts are described in docs/report.md.
#pragma once

#include <string>
#include <vector>

#include "db/tuning_set.hpp"
#include "report/device_ceilings.hpp"

namespace kforge::report {

struct ReportOptions {
  std::string title = "kforge tuning report";
  std::vector<DeviceCeilings> ceilings;  ///< user ceilings, tried before the built-in table
};

/// The page for every (device, problem) of `set` that has results. `set`
/// should hold every result (TuningFilter::all_results), failures included;
/// with winners only the landscape shows the winners alone.
std::string render_report_html(const TuningSet& set, const ReportOptions& options);

}  // namespace kforge::report
