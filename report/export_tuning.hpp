// One export of a tuning database or JSON export, as `kforge export` and the
// Python package make it (docs/export.md): the rows a filter selects, with
// winners of template versions that are no longer current and problems the
// lookup would refuse left out unless asked, rendered in one format.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/tuning_set.hpp"
#include "runtime/catalog/template_catalog.hpp"

namespace kforge::report {

struct ExportRequest {
  std::string format = "json";  ///< json, csv, markdown (or md), header
  TuningFilter filter;
  bool include_stale = false;    ///< keep winners of template versions that are no longer current
  bool keep_undeclared = false;  ///< a dump: keep rows the lookup would refuse (export_rows' rules)
  std::string ns = "kforge_tuned";  ///< the header format's C++ namespace
  std::string exported_by;          ///< the JSON format's producer line ("kforge 0.1.0 (rev)")
};

struct ExportOutput {
  std::string text;
  TuningSet set;  ///< the rows exported
  int stale_left_out = 0;
  std::vector<std::string> skipped;  ///< problems left out as undeclared, one line each
};

/// Why `ns` cannot name the header's namespace ("" when it can): each part
/// of `a::b` an identifier, neither a C++ keyword nor reserved (`__x`, `_X`).
std::string namespace_problem(const std::string& ns);

/// Reads `source` (a database or a JSON export) through `request.filter` and
/// renders it; templates and declared operators come from `catalog`. Bad
/// input (an unknown format, a namespace no header can use, an unreadable
/// source) names the field and value.
Result<ExportOutput> export_tuning(const std::string& source, const ExportRequest& request,
                                   const TemplateCatalog& catalog);

}  // namespace kforge::report
