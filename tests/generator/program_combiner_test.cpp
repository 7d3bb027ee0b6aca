// Combined programs: the scanners that find a template's macros and
// file-scope functions, and the translation unit that holds several instances.
#include "generator/program_combiner.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "tests/generator/generator_fixtures.hpp"

using kforge::combine_instances;
using kforge::Config;
using kforge::ErrorCode;
using kforge::file_scope_functions;
using kforge::Instance;
using kforge::macro_names;
using kforge::TemplateSource;
using Names = std::vector<std::string>;

namespace {

const kforge::GemmOperator kGemm;

// A guarded prelude, as the built-in ones are; it reads KF_BIAS.
const char* kPrelude =
    "#ifndef KF_PRELUDE_H\n#define KF_PRELUDE_H\n#define KF_GLOBAL global\n"
    "#ifndef KF_BIAS\n#define KF_BIAS 0\n#endif\n#endif\n";

// A helper, a derived macro and a kernel, as templates are written.
const char* kKernel =
    "#define THREADS (BM / TM)  /* derived */\n"
    "static inline float twice(float x) { return 2.0f * x; }\n"
    "float declared_only(float x);\n"
    "kernel void KF_KERNEL_NAME(KF_GLOBAL float* c) {\n"
    "  c[0] = twice((float)THREADS);  // twice(\n"
    "}\n";

TemplateSource make_template(const char* kernel = kKernel) {
  auto t = TemplateSource::from_text(kforge::test::gemm_manifest_json().dump(2), kernel, "t");
  if (!t) FAIL(t.error().message);
  return std::move(t).value();
}

Instance instance(const TemplateSource& tpl, std::int64_t bm, std::int64_t tm, const char* prelude = kPrelude) {
  Config c;
  c.values = {{"BK", 8}, {"BM", bm}, {"BN", 32}, {"TM", tm}, {"TN", 2}};
  kforge::Problem p;
  p.op = "gemm";
  p.dims = {{"M", 64}, {"N", 64}, {"K", 64}, {"batch", 1}};
  auto inst = kforge::instantiate(tpl, prelude, kGemm, c, p, kforge::DeviceLimits{});
  if (!inst) FAIL(inst.error().message);
  return std::move(inst).value();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("macro_names finds every macro a text defines or undefines, in any branch", "[combine]") {
  const char* text =
      "#define A 1\n  #  define B(x) (x)\n#if 0\n#define C\n#else\n#undef D\n#endif\n"
      "#ifndef A\n#define A 2\n#endif\n#include \"x.h\"\nint E;\n#define F \\\n  3\n";
  CHECK(macro_names(text) == Names{"A", "B", "C", "D", "F"});
  CHECK(macro_names("").empty());
}

TEST_CASE("file_scope_functions finds definitions, not declarations, calls or comments", "[combine]") {
  CHECK(file_scope_functions(kKernel) == Names{"twice", "KF_KERNEL_NAME"});
  // Calls and nested braces inside a body, strings, comments and directives are not definitions.
  const char* text =
      "/* void in_comment(void) {} */\n// void in_line_comment(void) {}\n"
      "#define MACRO_FN(x) { x }\n"
      "KF_INLINE void helper(int a,\n                   int b) {\n  if (a) { call(b); }\n  other(\"f(x) {\");\n}\n"
      "int g(void) { return helper2(1); }\n";
  CHECK(file_scope_functions(text) == Names{"helper", "g"});
}

TEST_CASE("combine_instances keeps each instance's text and undoes its macros and helpers after it", "[combine]") {
  const TemplateSource tpl = make_template();
  const Instance a = instance(tpl, 32, 2), b = instance(tpl, 64, 4);
  auto combined = combine_instances(tpl, kPrelude, {&a, &b});
  REQUIRE(combined.ok());
  const std::string& s = *combined;
  // Each instance's own text, whole and in order.
  const auto at_a = s.find(a.source), at_b = s.find(b.source);
  REQUIRE(at_a != std::string::npos);
  REQUIRE(at_b != std::string::npos);
  CHECK(at_a < at_b);
  // The helper is renamed per instance, the kernels keep their own names.
  CHECK(s.find("#define twice twice__kf_combined_0\n") < at_a);
  CHECK(s.find("#define twice twice__kf_combined_1\n") < at_b);
  CHECK(s.find("#define twice twice__kf_combined_1\n") > at_a);
  // Between the instances: every macro of the first one's defines and of the
  // template undefined, the prelude's own macros kept (it is expanded once).
  const std::string between = s.substr(at_a + a.source.size(), at_b - at_a - a.source.size());
  for (const char* m : {"BM", "TM", "KF_KERNEL_NAME", "KF_DTYPE_F32", "KF_BIAS", "THREADS", "twice"}) {
    INFO(m);
    CHECK(count(between, std::string("#undef ") + m + "\n") == 1);
  }
  CHECK(count(between, "#undef KF_PRELUDE_H") == 0);
  CHECK(count(between, "#undef KF_GLOBAL") == 0);
  CHECK(s.find(a.kernel_name) != std::string::npos);
  CHECK(s.find(b.kernel_name) != std::string::npos);
}

TEST_CASE("combine_instances declines what would change what later instances see", "[combine]") {
  SECTION("a template that changes one of the prelude's macros") {
    const TemplateSource tpl = make_template("#undef KF_GLOBAL\n#define KF_GLOBAL __global\nkernel void KF_KERNEL_NAME(void) {}\n");
    const Instance a = instance(tpl, 32, 2), b = instance(tpl, 64, 4);
    auto combined = combine_instances(tpl, kPrelude, {&a, &b});
    REQUIRE_FALSE(combined.ok());
    CHECK(combined.error().code == ErrorCode::kUnsupported);
    CHECK_THAT(combined.error().message, Catch::Contains("gemm_test") && Catch::Contains("KF_GLOBAL"));
  }
  SECTION("instances that differ in a macro the prelude reads") {
    const std::string prelude = std::string(kPrelude) + "#define KF_TILE_ROWS BM\n#ifndef BM\n#define BM 1\n#endif\n";
    const TemplateSource tpl = make_template();
    const Instance a = instance(tpl, 32, 2, prelude.c_str()), b = instance(tpl, 64, 4, prelude.c_str());
    auto combined = combine_instances(tpl, prelude, {&a, &b});
    REQUIRE_FALSE(combined.ok());
    CHECK_THAT(combined.error().message, Catch::Contains("BM"));
    // Instances equal in it combine.
    const Instance c = instance(tpl, 32, 4, prelude.c_str());
    CHECK(combine_instances(tpl, prelude, {&a, &c}).ok());
  }
  SECTION("no instances, or one of another template") {
    const TemplateSource tpl = make_template();
    CHECK(combine_instances(tpl, kPrelude, {}).error().code == ErrorCode::kBadInput);
    Instance other = instance(tpl, 32, 2);
    other.template_name = "another";
    CHECK(combine_instances(tpl, kPrelude, {&other}).error().code == ErrorCode::kBadInput);
  }
}
