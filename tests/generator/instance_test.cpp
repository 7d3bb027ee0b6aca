// Instances: source layout, kernel name, geometry, resource limits, distrust of configurations.
#include "generator/instance.hpp"

#include <catch2/catch.hpp>

#include "core/hash.hpp"
#include "generator/gemm_operator.hpp"
#include "tests/generator/generator_fixtures.hpp"
#include "tests/test_util.hpp"

using kforge::Config;
using kforge::ErrorCode;
using kforge::TemplateSource;
using nlohmann::json;

namespace {

const kforge::GemmOperator kGemm;
const char* kKernel = "kernel void KF_KERNEL_NAME(void) {}\n";
const char* kPrelude = "// prelude\n#define KF_GLOBAL global";

TemplateSource make_template(const json& j = kforge::test::gemm_manifest_json()) {
  auto t = TemplateSource::from_text(j.dump(2), kKernel, "t");
  if (!t) FAIL(t.error().message);
  return std::move(t).value();
}

kforge::Problem problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  kforge::Problem p;
  p.op = "gemm";
  p.dims = {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}};
  return p;
}

Config cfg(std::int64_t bk, std::int64_t bm, std::int64_t bn, std::int64_t tm, std::int64_t tn) {
  Config c;
  c.values = {{"BK", bk}, {"BM", bm}, {"BN", bn}, {"TM", tm}, {"TN", tn}};
  return c;
}

}  // namespace

TEST_CASE("instance: source is defines, prelude, #line, kernel, in order", "[instance]") {
  const TemplateSource t = make_template();
  kforge::Problem p = problem(512, 128, 256, 2);
  p.dtype = kforge::Dtype::kF16;
  p.layout = kforge::Layout{true, false};
  auto inst =
      kforge::instantiate(t, kPrelude, kGemm, cfg(16, 64, 32, 4, 2), p, kforge::DeviceLimits::baseline());
  if (!inst) FAIL(inst.error().message);
  CHECK(inst->template_name == "gemm_test");
  CHECK(inst->config_name == "BK16_BM64_BN32_TM4_TN2");
  CHECK(inst->kernel_name == "gemm_test__BK16_BM64_BN32_TM4_TN2");
  CHECK(inst->source ==
        "// kforge instance: gemm_test BK16_BM64_BN32_TM4_TN2 f16 TN\n"
        "#define BK 16\n"
        "#define BM 64\n"
        "#define BN 32\n"
        "#define TM 4\n"
        "#define TN 2\n"
        "#define KF_KERNEL_NAME gemm_test__BK16_BM64_BN32_TM4_TN2\n"
        "#define KF_DTYPE_F16 1\n"
        "#define KF_DTYPE_BYTES 2\n"
        "#define KF_TRANS_A 1\n"
        "#define KF_TRANS_B 0\n"
        "#define KF_BIAS 0\n"
        "#define KF_ACTIVATION 0\n"
        "// prelude\n"
        "#define KF_GLOBAL global\n"
        "#line 1 \"gemm_test.c\"\n"
        "kernel void KF_KERNEL_NAME(void) {}\n");
  CHECK(inst->local_memory_bytes == 16 * (64 + 32) * 4);
}

TEST_CASE("instance: the epilogue is defined for the kernel and named in the header", "[instance]") {
  const TemplateSource t = make_template();
  kforge::Problem p = problem(512, 128, 256, 2);
  p.epilogue = *kforge::parse_epilogue("bias+gelu");
  auto inst = kforge::instantiate(t, kPrelude, kGemm, cfg(16, 64, 32, 4, 2), p, kforge::DeviceLimits::baseline());
  if (!inst) FAIL(inst.error().message);
  CHECK_THAT(inst->source, Catch::StartsWith("// kforge instance: gemm_test BK16_BM64_BN32_TM4_TN2 f32 NN bias+gelu\n"));
  CHECK_THAT(inst->source, Catch::Contains("#define KF_BIAS 1\n#define KF_ACTIVATION 2\n// prelude\n"));
}

TEST_CASE("instance: launch geometry for a given problem", "[instance]") {
  const TemplateSource t = make_template();
  auto inst = kforge::instantiate(t, "", kGemm, cfg(8, 32, 64, 2, 4), problem(1000, 130, 64, 3),
                                  kforge::DeviceLimits::baseline());
  if (!inst) FAIL(inst.error().message);
  CHECK(inst->geometry.block == std::array<std::int64_t, 3>{16, 16, 1});
  CHECK(inst->geometry.grid == std::array<std::int64_t, 3>{3, 32, 3});  // ceil(130/64), ceil(1000/32)
  CHECK(inst->source.find("#define KF_DTYPE_F32 1\n#define KF_DTYPE_BYTES 4\n") != std::string::npos);
}

TEST_CASE("instance: device limits give kResource errors", "[instance]") {
  const TemplateSource t = make_template();
  kforge::DeviceLimits limits;
  limits.max_block_threads = 128;
  auto threads = kforge::instantiate(t, "", kGemm, cfg(8, 32, 32, 2, 2), problem(256, 256, 256), limits);
  REQUIRE_FALSE(threads.ok());
  CHECK(threads.error().code == ErrorCode::kResource);
  CHECK(threads.error().message ==
        "template gemm_test: configuration BK8_BM32_BN32_TM2_TN2 uses 256 threads per block, "
        "more than the device limit 128");
  limits = kforge::DeviceLimits{};
  limits.local_mem_bytes = 4096;
  auto local = kforge::instantiate(t, "", kGemm, cfg(16, 64, 64, 4, 4), problem(256, 256, 256), limits);
  REQUIRE_FALSE(local.ok());
  CHECK(local.error().code == ErrorCode::kResource);
  CHECK(local.error().message ==
        "template gemm_test: configuration BK16_BM64_BN64_TM4_TN4 uses 8192 bytes of local "
        "memory, more than the device limit 4096");
}

TEST_CASE("instance: a tampered configuration is rejected before any source", "[instance]") {
  const TemplateSource t = make_template();
  const kforge::Problem p = problem(256, 256, 256);
  const auto limits = kforge::DeviceLimits::baseline();
  Config c = cfg(8, 48, 32, 2, 2);
  auto undeclared = kforge::instantiate(t, "", kGemm, c, p, limits);
  REQUIRE_FALSE(undeclared.ok());
  CHECK(undeclared.error().code == ErrorCode::kBadInput);
  CHECK_THAT(undeclared.error().message,
             Catch::StartsWith("template gemm_test: parameter BM: value 48 is not declared"));
  c.values["BM"] = 9223372036854775807;
  auto huge = kforge::instantiate(t, "", kGemm, c, p, limits);
  REQUIRE_FALSE(huge.ok());
  CHECK(huge.error().code == ErrorCode::kBadInput);
  CHECK_THAT(huge.error().message, Catch::Contains("value 9223372036854775807 is not declared"));
  c = cfg(8, 32, 32, 2, 2);
  c.values["X\n#include \"/etc/passwd\"\n#define Y"] = 1;
  auto injected = kforge::instantiate(t, "", kGemm, c, p, limits);
  REQUIRE_FALSE(injected.ok());
  CHECK(injected.error().code == ErrorCode::kBadInput);
  CHECK(injected.error().message.find('\n') == std::string::npos);  // one line, escaped
  c = cfg(8, 32, 32, 2, 2);
  c.values.erase("BK");
  REQUIRE_FALSE(kforge::instantiate(t, "", kGemm, c, p, limits).ok());
}

TEST_CASE("instance: constraints, dtypes, layouts and envelope", "[instance]") {
  json j = kforge::test::gemm_manifest_json();
  j["layouts"] = {"NN", "NT"};
  j["envelope"] = {"M % BM == 0"};
  const TemplateSource t = make_template(j);
  const auto limits = kforge::DeviceLimits::baseline();
  auto broken = kforge::instantiate(t, "", kGemm, cfg(8, 32, 32, 3, 2), problem(256, 256, 256), limits);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().code == ErrorCode::kBadInput);
  CHECK(broken.error().message ==
        "template gemm_test: configuration BK8_BM32_BN32_TM3_TN2 breaks constraints[0] "
        "'BM % TM == 0' on gemm/K=256,M=256,N=256,batch=1/f32/NN");
  kforge::Problem p = problem(256, 256, 256);
  p.dtype = kforge::Dtype::kBF16;
  auto dtype = kforge::instantiate(t, "", kGemm, cfg(8, 32, 32, 2, 2), p, limits);
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(dtype.error().message, Catch::Contains("bf16"));
  p = problem(256, 256, 256);
  p.layout = kforge::Layout{true, true};
  auto layout = kforge::instantiate(t, "", kGemm, cfg(8, 32, 32, 2, 2), p, limits);
  REQUIRE_FALSE(layout.ok());
  CHECK(layout.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(layout.error().message, Catch::Contains("TT"));
  auto outside = kforge::instantiate(t, "", kGemm, cfg(8, 64, 32, 2, 2), problem(96, 256, 256), limits);
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(outside.error().message, Catch::Contains("envelope[0] 'M % BM == 0'"));
  CHECK(kforge::instantiate(t, "", kGemm, cfg(8, 32, 32, 2, 2), problem(96, 256, 256), limits).ok());
}

TEST_CASE("template source: load_dir, errors and hash", "[instance]") {
  kforge::test::TempDir dir;
  const std::string manifest = kforge::test::gemm_manifest_json().dump(2);
  auto missing = TemplateSource::load_dir(dir.path().string());
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains(dir.file("manifest.json")));

  kforge::test::write_file(dir.file("manifest.json"), manifest);
  auto no_source = TemplateSource::load_dir(dir.path().string());
  REQUIRE_FALSE(no_source.ok());
  CHECK_THAT(no_source.error().message, Catch::Contains(dir.file("gemm_test.c")));

  kforge::test::write_file(dir.file("gemm_test.c"), kKernel);
  auto t = TemplateSource::load_dir(dir.path().string());
  if (!t) FAIL(t.error().message);
  CHECK(t->manifest_text == manifest);
  CHECK(t->kernel_text == kKernel);
  CHECK(t->origin == dir.path().string());
  CHECK(t->manifest.name == "gemm_test");

  const std::string h = t->hash("prelude");
  CHECK(h == kforge::Hasher().add(manifest).add(kKernel).add("prelude").hex());
  CHECK(h.size() == 16);
  CHECK(t->hash("other prelude") != h);
  TemplateSource edited = *t;
  edited.kernel_text += " ";
  CHECK(edited.hash("prelude") != h);

  kforge::test::write_file(dir.file("manifest.json"), "{ not json");
  auto bad = TemplateSource::load_dir(dir.path().string());
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message, Catch::StartsWith(dir.file("manifest.json") + ": JSON syntax error"));
}

TEST_CASE("template source: a kernel never named KF_KERNEL_NAME is refused when it loads", "[instance]") {
  kforge::test::TempDir dir;
  kforge::test::write_file(dir.file("manifest.json"), kforge::test::gemm_manifest_json().dump(2));
  // Under the manifest's own kernel name, with KF_KERNEL_NAME only in a comment.
  kforge::test::write_file(dir.file("gemm_test.c"),
                           "// not KF_KERNEL_NAME\nKF_KERNEL void gemm_test(KF_GLOBAL float* c) { c[0] = 0; }\n");
  auto t = TemplateSource::load_dir(dir.path().string());
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code == ErrorCode::kBadInput);
  CHECK(t.error().message == dir.file("gemm_test.c") +
                                 ": the kernel must be named KF_KERNEL_NAME, as in `KF_KERNEL void "
                                 "KF_KERNEL_NAME(...)`: kforge defines that name per configuration (it names "
                                 "'gemm_test', the manifest's kernel: rename that to KF_KERNEL_NAME)");
}

TEST_CASE("instance: a kernel name past the limit is cut and ends in its configuration's hash", "[instance]") {
  CHECK(kforge::kernel_name_for("gemm_test", "BK16_BM64") == "gemm_test__BK16_BM64");
  std::string config = "BX8_REP8";
  for (int i = 0; i < 64; ++i) config += std::string("_X") + static_cast<char>('A' + i / 26) + static_cast<char>('A' + i % 26) + "0";
  const std::string name = kforge::kernel_name_for("gemm_repeat", config);
  CHECK(name.size() == kforge::kMaxKernelName);
  CHECK(name.rfind("gemm_repeat__BX8_REP8_XAA0", 0) == 0);
  CHECK(name.substr(name.size() - 18) == "_h" + kforge::Hasher().add(config).hex());
  std::string other = config;
  other.back() = '1';  // differs only past the cut
  CHECK(kforge::kernel_name_for("gemm_repeat", other) != name);
}
