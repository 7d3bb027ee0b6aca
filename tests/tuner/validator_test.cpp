// Output validation: tolerance per element, NaN never passes, first bad index.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "tuner/measure/validator.hpp"

using namespace kforge;

static Reference ref3() {
  Reference r;
  r.value = {1.0, -2.0, 3.0};
  r.scale = {1.0, 2.0, 3.0};
  r.tolerance = 1e-6;
  return r;
}

TEST_CASE("exact and within-tolerance outputs pass", "[validator]") {
  float out[3] = {1.0f, -2.0f, 3.0f};
  auto v = validate_output(out, 3, ref3());
  CHECK(v.passed);
  CHECK(v.error_norm == 0);
  out[2] = 3.0f + 2e-6f;  // threshold 3e-6
  CHECK(validate_output(out, 3, ref3()).passed);
}

TEST_CASE("an error over its threshold fails and is located", "[validator]") {
  float out[3] = {1.0f, -2.001f, 3.5f};
  auto v = validate_output(out, 3, ref3());
  CHECK_FALSE(v.passed);
  CHECK(v.bad_count == 2);
  CHECK(v.first_bad == 1);
  CHECK(v.reference == -2.0);
  CHECK(v.threshold == Approx(2e-6));
  CHECK_THAT(v.describe(), Catch::Contains("first bad index 1"));
}

TEST_CASE("NaN and infinity never pass", "[validator]") {
  float out[3] = {1.0f, std::nanf(""), 3.0f};
  auto v = validate_output(out, 3, ref3());
  CHECK_FALSE(v.passed);
  CHECK(v.first_bad == 1);
  out[1] = INFINITY;
  CHECK_FALSE(validate_output(out, 3, ref3()).passed);
}

TEST_CASE("a non-finite reference is matched exactly, whatever its threshold", "[validator]") {
  // An infinite reference makes abs + rel * |reference| infinite: the
  // threshold must not then accept whatever the kernel wrote.
  Reference r;
  r.value = {INFINITY, -INFINITY, 1.0};
  r.scale = {INFINITY, INFINITY, INFINITY};
  r.tolerance = 1.0;
  float out[3] = {INFINITY, -INFINITY, 1.0f};
  CHECK(validate_output(out, 3, r).passed);
  out[0] = 5.0f;
  auto v = validate_output(out, 3, r);
  CHECK_FALSE(v.passed);
  CHECK(v.first_bad == 0);
  out[0] = -INFINITY;
  CHECK_FALSE(validate_output(out, 3, r).passed);
  out[0] = std::nanf("");
  CHECK_FALSE(validate_output(out, 3, r).passed);
  out[0] = INFINITY;
  out[2] = INFINITY;  // a finite reference never passes an infinity
  v = validate_output(out, 3, r);
  CHECK_FALSE(v.passed);
  CHECK(v.first_bad == 2);
}

TEST_CASE("a zero threshold demands an exact answer", "[validator]") {
  Reference r;
  r.value = {0.0};
  r.scale = {0.0};
  r.tolerance = 1e-6;
  float ok = 0.0f, bad = 1e-30f;
  CHECK(validate_output(&ok, 1, r).passed);
  CHECK_FALSE(validate_output(&bad, 1, r).passed);
}

TEST_CASE("a large output compared in parallel chunks: the first bad element, every bad one, the norm", "[validator]") {
  // Over 2^20 elements: several chunks of the parallel comparison.
  const std::size_t n = (std::size_t{1} << 20) + 12345;
  Reference r;
  r.value.resize(n);
  r.scale.assign(n, 1.0);
  r.tolerance = 1e-6;
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    r.value[i] = static_cast<double>(i % 97) - 48.0;
    out[i] = static_cast<float>(r.value[i]);
  }
  CHECK(validate_output(out.data(), n, r).passed);
  // Bad elements in the third chunk and the last; the first is reported.
  const std::size_t first = (std::size_t{1} << 19) + 7, last = n - 1;
  out[first] += 0.5f;
  out[last] += 0.25f;
  auto v = validate_output(out.data(), n, r);
  CHECK_FALSE(v.passed);
  CHECK(v.bad_count == 2);
  CHECK(v.first_bad == first);
  CHECK(v.reference == r.value[first]);
  double ref2 = 0;
  for (double x : r.value) ref2 += x * x;
  CHECK(v.error_norm == Approx(std::sqrt((0.25 + 0.0625) / ref2)).epsilon(1e-12));
  CHECK(v.error_ratio == Approx(0.5 / 1e-6));
  // A NaN in the last chunk fails the whole output and makes the norm infinite.
  out[first] = static_cast<float>(r.value[first]);
  out[last] = std::nanf("");
  v = validate_output(out.data(), n, r);
  CHECK_FALSE(v.passed);
  CHECK(v.bad_count == 1);
  CHECK(v.first_bad == last);
  CHECK(std::isinf(v.error_norm));
}
