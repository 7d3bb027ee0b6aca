// Element-wise and normwise comparison against the reference.
#include "validator.hpp"

#include <cmath>
#include <cstdio>

#include "tuner.hpp"

namespace kforge {

ValidationResult validate_output(const float* out, std::size_t n, const Reference& ref) {
  ValidationResult r;
  r.passed = true;
  double diff2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = out[i];
    const double want = ref.value[i];
    const double err = v == want ? 0.0 : std::fabs(v - want);  // equal infinities match
    const double thr = ref.tolerance * ref.scale[i];
    // Written as !(err <= thr) so that a NaN value or error fails.
    const bool bad = !(err <= thr);
    if (std::isfinite(err)) {
      diff2 += err * err;
      if (thr > 0) r.error_ratio = std::max(r.error_ratio, err / thr);
      else if (err > 0) r.error_ratio = INFINITY;
    } else {
      diff2 = INFINITY;
      r.error_ratio = INFINITY;
    }
    ref2 += want * want;
    if (bad) {
      if (r.passed) {
        r.first_bad = i;
        r.value = v;
        r.reference = want;
        r.threshold = thr;
      }
      r.passed = false;
      ++r.bad_count;
    }
  }
  r.error_norm = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return r;
}

std::string ValidationResult::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "first bad index %zu (%zu bad): value %.9g reference %.9g |error| %.3g > threshold %.3g",
                first_bad, bad_count, value, reference, std::fabs(value - reference), threshold);
  return buf;
}

std::string describe_failure(const std::string& template_name, const std::string& config, const Problem& problem,
                             const std::string& run, const ValidationResult& v) {
  return "wrong result: template " + template_name + " config " + config + " problem " + problem.key() +
         " dtype " + std::string(dtype_name(problem.dtype)) + " layout " + problem.layout.name() + " (" + run +
         "): " + v.describe() + "; rerun: " + rerun_command(problem, template_name, config);
}

}  // namespace kforge
