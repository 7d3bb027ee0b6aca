// Element-wise and normwise comparison against the reference.
#include "tuner/measure/validator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/parallel_for.hpp"
#include "tuner/tuner.hpp"

namespace kforge {

namespace {

/// Elements per chunk of the comparison: chunks are compared in parallel and
/// combined in order, so the result does not depend on the thread count.
constexpr std::size_t kValidateChunk = std::size_t{1} << 18;

struct Partial {
  double diff2 = 0.0, ref2 = 0.0, error_ratio = 0.0;
  std::size_t bad_count = 0, first_bad = 0;
  double value = 0.0, reference = 0.0, threshold = 0.0;  ///< at first_bad
};

template <class T>
Partial compare(const T* out, std::size_t begin, std::size_t end, const Reference& ref) {
  Partial p;
  for (std::size_t i = begin; i < end; ++i) {
    const double v = out[i];
    const double want = ref.value[i];
    const double err = v == want ? 0.0 : std::fabs(v - want);  // equal infinities match
    const double thr = ref.tolerance * ref.scale[i];
    // Written as !(err <= thr) so that a NaN value or error fails. A
    // non-finite reference makes the threshold infinite: it is matched
    // exactly instead, and a finite one never passes an infinity.
    const bool bad = std::isfinite(want) ? !(err <= thr) || !std::isfinite(v) : v != want;
    if (std::isfinite(err)) {
      p.diff2 += err * err;
      if (thr > 0)
        p.error_ratio = std::max(p.error_ratio, err / thr);
      else if (err > 0)
        p.error_ratio = INFINITY;
    } else {
      p.diff2 = INFINITY;
      p.error_ratio = INFINITY;
    }
    p.ref2 += want * want;
    if (bad) {
      if (p.bad_count == 0) {
        p.first_bad = i;
        p.value = v;
        p.reference = want;
        p.threshold = thr;
      }
      ++p.bad_count;
    }
  }
  return p;
}

template <class T>
ValidationResult validate_values(const T* out, std::size_t n, const Reference& ref) {
  const std::size_t chunks = (n + kValidateChunk - 1) / kValidateChunk;
  std::vector<Partial> parts(chunks);
  parallel_for(chunks, [&](std::size_t c) {
    parts[c] = compare(out, c * kValidateChunk, std::min(n, (c + 1) * kValidateChunk), ref);
  });
  ValidationResult r;
  r.passed = true;
  double diff2 = 0.0, ref2 = 0.0;
  for (const Partial& p : parts) {
    diff2 += p.diff2;
    ref2 += p.ref2;
    r.error_ratio = std::max(r.error_ratio, p.error_ratio);
    if (p.bad_count > 0 && r.passed) {
      r.passed = false;
      r.first_bad = p.first_bad;
      r.value = p.value;
      r.reference = p.reference;
      r.threshold = p.threshold;
    }
    r.bad_count += p.bad_count;
  }
  r.error_norm = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return r;
}

}  // namespace

ValidationResult validate_output(const float* out, std::size_t n, const Reference& ref) {
  return validate_values(out, n, ref);
}

ValidationResult validate_output(const double* out, std::size_t n, const Reference& ref) {
  return validate_values(out, n, ref);
}

std::string ValidationResult::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "first bad index %zu (%zu bad): value %.9g reference %.9g |error| %.3g > threshold %.3g",
                first_bad, bad_count, value, reference, std::fabs(value - reference), threshold);
  return output.empty() ? std::string(buf) : std::string(buf) + " (" + output + ")";
}

std::string describe_failure(const std::string& template_name, const std::string& config,
                             const Problem& problem, const std::string& run, const ValidationResult& v) {
  return "wrong result: template " + template_name + " config " + config + " problem " + problem.key() +
         " dtype " + std::string(dtype_name(problem.dtype)) + " layout " + problem.layout.name() + " (" +
         run + "): " + v.describe() + "; rerun: " + rerun_command(problem, template_name, config);
}

}  // namespace kforge
