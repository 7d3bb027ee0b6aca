// Facts derived from stored tuning rows that several tools print: the problem
// behind a stored key, achieved throughput, and whether a stored template
// version is the one this kforge would compile now.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "db/records.hpp"
#include "generator/problem.hpp"
#include "runtime/catalog/template_catalog.hpp"

namespace kforge::report {

/// The problem a stored row describes (op, dims, dtype, layout), normalized
/// by its operator; nullopt when the operator is unknown to this kforge or
/// the row is malformed. Used for cost figures (flops, bytes) only.
std::optional<Problem> problem_of(const ProblemRecord& p);

/// What one run of a stored problem costs: the operator's flop count and
/// the minimum bytes it moves.
struct ProblemCost {
  double flops = 0;
  double bytes = 0;
};
/// nullopt when the problem is unknown to this kforge (problem_of).
std::optional<ProblemCost> cost_of(const ProblemRecord& p);

struct Throughput {
  double gflops = 0;  ///< operator flops per second, 1e9
  double gbps = 0;    ///< the operator's minimum bytes moved per second, 1e9
  double intensity = 0;  ///< flops per byte
};
/// Achieved throughput of `p` run in `ms` milliseconds; nullopt when the
/// problem is unknown or the time is not positive.
std::optional<Throughput> throughput_of(const ProblemRecord& p, double ms);

/// "current" when `hash` is the hash the catalog's template of that name has
/// on `backend` now, "stale" when the catalog has the template under another
/// hash, "unknown" when the catalog lacks the template or it does not target
/// the backend (pass a user template with --template DIR to check it).
std::string template_state(const TemplateCatalog& catalog, const std::string& name, const std::string& hash,
                           std::string_view backend);

/// Shortest text that reads back as the same double ("0.1", "1e-05"); "" for NaN or infinity.
std::string exact_number(double v);
/// `significant` significant digits, no exponent for ordinary magnitudes ("12.35", "0.001234").
std::string short_number(double v, int significant = 4);

}  // namespace kforge::report
