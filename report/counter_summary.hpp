// A result's stored counters as `kforge show` (and the reports) present
// them: grouped by collector, the headline numbers, the top warp stalls, and
// the bound verdict against the device's ceilings (docs/profiling.md).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/records.hpp"
#include "report/bound_verdict.hpp"
#include "report/device_ceilings.hpp"

namespace kforge::report {

/// [{"collector","source","tool","counters_version","unavailable"?,"readings":{name:{"value","unit"}}}],
/// one object per collector of `rows` (one result's rows).
nlohmann::json counters_json(const std::vector<CounterRecord>& rows);

/// One line: each collector's headline numbers or why it read nothing:
/// "ncu: DRAM 218.1 MB, L2 hit % 82.1, L1 hit % 1.32, occupancy % 24.9, tensor pipe % 71.4, FMA pipe % 6.21,
/// bank conflicts 1245184, top stalls math_pipe_throttle 4.96 barrier 3.12 wait 2.31; perf: unavailable:
/// ...".
std::string counters_line(const std::vector<CounterRecord>& rows);

/// The `n` largest warp-stall reasons of ncu's rows, largest first.
std::vector<std::pair<std::string, double>> top_stalls(const std::vector<CounterRecord>& rows,
                                                       std::size_t n = 3);

/// `rows` with the operator's model rows (model_bytes, model_flops) added from
/// the problem's cost model (tuning_facts.hpp) where none were stored, as in a
/// database tuned before counters existed; unchanged where the model is unknown.
std::vector<CounterRecord> with_model_rows(std::vector<CounterRecord> rows, const ProblemRecord& problem,
                                           double median_ms);

/// The verdict of a result with median `median_ms` from its rows and the
/// device's ceilings (none: the profiler's own peak fractions, else unknown).
BoundVerdict verdict_for(double median_ms, const std::vector<CounterRecord>& rows,
                         const std::optional<DeviceCeilings>& ceilings, const std::string& dtype);

}  // namespace kforge::report
