// The people-and-program formats of `kforge export`: CSV, Markdown and a
// C++ header with a constexpr table (JSON is db/json_interchange.hpp).
// Formats: docs/export.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/tuning_set.hpp"
#include "report/tuning_facts.hpp"
#include "runtime/catalog/template_catalog.hpp"

namespace kforge::report {

/// One row of an exported table: a winner, or with all results any result.
struct ExportRow {
  const DeviceRecord* device = nullptr;
  const ProblemRecord* problem = nullptr;
  const ResultRecord* result = nullptr;
  bool winner = false;  ///< the result is the winner of its (device, problem, template version)
  bool best = false;    ///< the fastest winner of its (device, problem) in the set
  std::string state;    ///< template_state(): current, stale or unknown
  std::optional<Throughput> throughput;
};

/// Rows in the set's order: winners sorted by device, problem and time, or
/// with set.filter.all_results every result by id. Needs each row's device,
/// problem and result in the set (a set read by read_tuning_set or parsed
/// from an export always has them; rows lacking one are skipped).
std::vector<ExportRow> export_rows(const TuningSet& set, const TemplateCatalog& catalog);

/// Drops the winners and results recorded under a template version that is
/// no longer current (template_state() == "stale") and what only they
/// referred to; `dropped` counts the winners left out.
TuningSet without_stale(TuningSet set, const TemplateCatalog& catalog, int& dropped);

/// Drops the winners and results whose configuration their template
/// version does not declare (a tampered or foreign row; the rule of the
/// lookup and of the database's winner slot), the problems whose stored
/// dims are not positive 32-bit integers with their winners and results,
/// and what only they referred to; `skipped` gets one line per row left
/// out, naming it and why.
TuningSet without_undeclared(TuningSet set, const TemplateCatalog& catalog, std::vector<std::string>& skipped);

/// RFC 4180 CSV with a header row: one column per dimension and per
/// parameter (over all rows; empty where a row has none), flops and bytes of
/// the problem, GFLOP/s and GB/s; numbers in shortest exact form.
std::string render_csv(const TuningSet& set, const std::vector<ExportRow>& rows);
/// One section per device, one table row per exported row.
std::string render_markdown(const TuningSet& set, const std::vector<ExportRow>& rows);
/// A self-contained C++17 header: the best winner per (device, problem) as a
/// constexpr table in namespace `ns`, with find(device_key, problem_key),
/// Entry::dim(name) and Entry::param(name). Needs no SQLite and no kforge.
std::string render_header(const TuningSet& set, const std::vector<ExportRow>& rows, const std::string& ns);

}  // namespace kforge::report
