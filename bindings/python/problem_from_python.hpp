// A Problem from the keyword arguments Python passes (op, dims, dtype,
// layout, epilogue, attrs), normalized by its operator. Every error names
// the field and value at fault, as the CLI's flags do.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "generator/problem.hpp"

namespace kforge::python {

struct ProblemFields {
  std::string op;
  std::map<std::string, std::int64_t> dims;
  std::string dtype = "f32";
  std::string layout = "NN";
  std::string epilogue = "none";
  std::map<std::string, std::string> attrs;
};

/// The normalized problem; kBadInput naming the unknown operator, dtype,
/// layout, epilogue or the dim the operator rejects.
Problem problem_from_fields(const ProblemFields& f);

}  // namespace kforge::python
