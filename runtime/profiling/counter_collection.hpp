// What one hardware-counter collector read for one configuration, or why it
// read nothing: the shape every collector (perf, ncu, rocprofiler) returns
// and the database's counters rows are written from (docs/profiling.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/records.hpp"

namespace kforge {

struct CounterReading {
  std::string name;  ///< the collector's own name: ncu's metric, perf's event
  double value = 0;
  std::string unit;  ///< byte, %, cycle, instruction, event, ...
};

struct CounterCollection {
  std::string collector;    ///< perf, ncu, rocprofiler, cupti
  std::string tool;         ///< what ran, with its version where known ("ncu 2025.1.1")
  std::string unavailable;  ///< empty when read; else "unavailable: <why>"
  std::vector<CounterReading> readings;

  bool available() const { return unavailable.empty(); }
  static CounterCollection none(std::string who, std::string why) {
    return {std::move(who), {}, "unavailable: " + std::move(why), {}};
  }
};

/// The counters rows of `c` for result `result_id`: one per reading (source
/// = the collector), or one "availability" row (source "unavailable") that
/// carries the reason.
std::vector<CounterRecord> counter_rows(const CounterCollection& c, std::int64_t result_id);

/// {"collector":..,"tool":..,"unavailable":..,"readings":[{"name","value","unit"}]}, and back
/// (a malformed object reads as unavailable, saying so).
nlohmann::json to_json(const CounterCollection& c);
CounterCollection collection_from_json(const nlohmann::json& j, const std::string& collector);

}  // namespace kforge
