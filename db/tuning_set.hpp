// Tuning data lifted out of a database (or a JSON export) for the tools that
// read it: export, import, compare, capabilities, report. Ids are those of the
// source; records refer to each other by key (device key, problem key,
// template name + hash) so a set can be written into any other database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/database.hpp"
#include "db/records.hpp"

namespace kforge {

/// Which rows a TuningSet holds. Every field left empty matches everything.
struct TuningFilter {
  /// Matches a device as device_matches() does (db/device_match.hpp).
  std::optional<std::string> device;
  std::optional<std::string> op, dtype, layout, problem_key;
  /// Every evaluated result (failures included), not only the winners' results.
  bool all_results = false;

  bool matches(const DeviceRecord& d) const;
  bool matches(const ProblemRecord& p) const;
};

/// Orders counter rows by their result's id (TuningSet::counters' order).
struct ByResult {
  bool operator()(const CounterRecord& a, const CounterRecord& b) const { return a.result_id < b.result_id; }
  bool operator()(const CounterRecord& a, std::int64_t id) const { return a.result_id < id; }
  bool operator()(std::int64_t id, const CounterRecord& b) const { return id < b.result_id; }
};

struct TuningSet {
  std::string source;               ///< file the set was read from
  int source_schema_version = 0;    ///< database schema, or the interchange schema of a JSON file
  TuningFilter filter;
  std::vector<DeviceRecord> devices;      ///< referenced by winners or results, by source id
  std::vector<TemplateRecord> templates;  ///< versions referenced by winners or results
  std::vector<ProblemRecord> problems;
  std::vector<SweepRecord> sweeps;        ///< sweeps the results came from
  std::vector<WinnerRecord> winners;      ///< best ok result per (device, problem, template version)
  /// Every winner's result; with filter.all_results, every result. By source id.
  /// template_name, template_hash, problem_key and device_key are always set.
  std::vector<ResultRecord> results;
  /// The hardware counters (and availability rows) of those results, sorted
  /// by result id (ByResult), each result's rows in stored order.
  std::vector<CounterRecord> counters;
  /// The peaks kforge measured on those devices (`kforge ceilings`).
  std::vector<MeasuredCeilingRecord> measured_ceilings;

  const DeviceRecord* device(const std::string& key) const;
  const ProblemRecord* problem(const std::string& key) const;
  const TemplateRecord* find_template(const std::string& name, const std::string& hash) const;
  const ResultRecord* result(std::int64_t id) const;
  const SweepRecord* sweep(std::int64_t id) const;
  /// The counter rows of one result (empty: none stored).
  std::vector<CounterRecord> counters_of(std::int64_t result_id) const;
  /// Results of one (device, problem), every template version, in evaluation (id) order.
  std::vector<const ResultRecord*> results_of(const std::string& device_key,
                                              const std::string& problem_key) const;
};

/// Keeps the rows `filter` selects, and the devices, problems, template
/// versions and sweeps they refer to. Without filter.all_results only the
/// winners' results stay; with it, a set that held only winners' results
/// still does (filter.all_results of the answer tells).
TuningSet filter_tuning_set(TuningSet set, const TuningFilter& filter);

/// Reads the rows of `db` that `filter` selects. Winners come sorted by
/// device key, problem key, median time and template; everything else by id.
Result<TuningSet> read_tuning_set(Database& db, const TuningFilter& filter);

/// Reads a tuning database or a JSON export (told apart by content: a SQLite
/// header or a JSON object). A JSON export is filtered again by `filter`; it
/// holds failed results only if it was exported with all results.
Result<TuningSet> load_tuning_set(const std::string& path, const TuningFilter& filter);

struct ImportCounts {
  std::int64_t devices = 0, templates = 0, problems = 0;  ///< rows in the set (inserted or found)
  std::int64_t sweeps_added = 0, sweeps_found = 0;
  std::int64_t results_added = 0;
  std::int64_t results_present = 0;  ///< same (device, template version, problem, config) already stored: kept
  std::int64_t counters_added = 0;   ///< counters rows written
  /// Rows of a collector the stored result already has counters from: kept, as db merge does.
  std::int64_t counters_present = 0;
};

/// Writes a set into `db`: devices, template versions and problems are
/// inserted or found by key, a sweep equal in every field to a stored one is
/// reused, and each result goes through Database::add_result (so winners are
/// recomputed by the database, and a result already stored is kept). Each
/// result's counters follow it, one collector at a time; a collector the
/// stored result already has rows from keeps them. The set
/// is checked whole before anything is written: a result or winner that refers
/// to a device, problem, template version or sweep the set lacks, or a
/// counters row to a result it lacks, is kBadInput.
Result<ImportCounts> import_tuning_set(Database& db, const TuningSet& set);

}  // namespace kforge
