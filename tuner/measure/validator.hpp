// Checks a kernel's output against the double-precision reference, element by
// element, with the tolerance policy of docs/tolerances.md. NaN never passes.
#pragma once

#include <cstddef>
#include <string>

#include "generator/operator.hpp"
#include "generator/problem.hpp"

namespace kforge {

struct ValidationResult {
  bool passed = false;
  double error_norm = 0.0;   ///< ||out - ref||_F / ||ref||_F
  double error_ratio = 0.0;  ///< max over elements of |out - ref| / threshold
  std::size_t bad_count = 0;
  std::size_t first_bad = 0;                             ///< flat index of the first failing element
  double value = 0.0, reference = 0.0, threshold = 0.0;  ///< at first_bad
  /// Where first_bad lies when the outputs are several ("output Y2 element 3").
  std::string output;

  /// "first bad index 37 of 65536 (1 bad): value 1.5 reference 1.25 |error| 0.25 > threshold 3.1e-06"
  std::string describe() const;
};

ValidationResult validate_output(const float* out, std::size_t n, const Reference& ref);
/// The same for outputs decoded from another dtype (f64, f16, integers).
ValidationResult validate_output(const double* out, std::size_t n, const Reference& ref);

/// The one-line failure report of a candidate, pasteable to rerun it:
/// "wrong result: template T config C problem KEY dtype D layout L (RUN): <describe()>; rerun: kforge tune
/// ...".
std::string describe_failure(const std::string& template_name, const std::string& config,
                             const Problem& problem, const std::string& run, const ValidationResult& v);

}  // namespace kforge
