// A problem as JSON, for the messages kforge's processes send each other
// (the tuner's worker setup, an online tuning job).
#pragma once

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "generator/problem.hpp"

namespace kforge {

/// {"op", "dims", "dtype", "layout", "epilogue", "attrs"}.
nlohmann::json problem_to_json(const Problem& p);
/// The problem `j` describes; kBadInput naming `where` and the field at fault.
Result<Problem> problem_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace kforge
