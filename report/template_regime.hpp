// What bounds a template's winners where it was tuned, for `capabilities`:
// each winner's bound verdict (bound_verdict.hpp) from its stored counters,
// else the operator's model, against the device's ceilings, and one line
// that sums them up ("memory-bound on 3 of 4 winners (0.62-0.88 of memory
// bandwidth ...)"). docs/capabilities.md, "Measured regime".
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/tuning_set.hpp"
#include "report/device_ceilings.hpp"

namespace kforge::report {

/// [{"device","problem","config","bound","text","from_model"}] for each of
/// `winners` (results of one template version in `set`), fastest per
/// (device, problem) only.
nlohmann::ordered_json regime_json(const TuningSet& set, const std::vector<const ResultRecord*>& winners,
                                   const std::vector<DeviceCeilings>& ceilings);

/// The line for people: per bound, how many winners and the range of the
/// first number behind it; "" when no winner has a known bound.
std::string regime_text(const nlohmann::ordered_json& regime);

}  // namespace kforge::report
