// hipRTC compiles every portable template for gfx90a (and gfx908) with no
// GPU, and the code object's metadata gives the resource report. Its own test
// executable: hipRTC and PoCL must never compile in one process
// (docs/architecture.md, Backends), so nothing here touches OpenCL.
#include <catch2/catch.hpp>

#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/device/target.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/runtime/template_alone.hpp"
#include "tests/test_level.hpp"

using namespace kforge;

namespace {

void require_hiprtc() {
  auto v = hiprtc_version();
  if (!v.ok()) {
    FAIL("hipRTC is required for this test (apt-get install libamdhip64-dev libhiprtc-builtins5 "
         "rocm-device-libs): " << v.error().message);
  }
}

Problem probe(const Operator& op, Dtype d, const Layout& l) {
  Problem p;
  p.op = std::string(op.name());
  for (const auto& dim : op.dims()) p.dims[dim] = dim == "batch" ? 1 : 96;
  p.dtype = d;
  p.layout = l;
  return *op.normalize(p);
}

}  // namespace

TEST_CASE("hipRTC compiles every portable template for gfx90a and gfx908", "[hip][hiprtc]") {
  require_hiprtc();
  REQUIRE(code_object_reader_available());
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  int compiled = 0;
  std::size_t combo = 0;
  // core: each dtype x layout with the default configuration; full: one more from the middle of the space.
  const bool full = test::test_level() == test::TestLevel::kFull;
  for (const auto& tpl : *builtins) {
    const auto& m = tpl.manifest;
    if (!m.supports_target("hip") || !m.arch_guard.empty() || m.is_library()) continue;
    const Operator* op = find_operator(m.op);
    REQUIRE(op != nullptr);
    for (Dtype d : m.dtypes) {
      for (const Layout& l : m.layouts) {
        // core: every third dtype x layout combination (rotating), full: all.
        const std::size_t idx = combo++;
        if (!full && idx % 3 != 0) continue;
        const std::string arch = (idx / 3) % 4 == 3 ? "gfx908" : "gfx90a";
        const Target t = *parse_target("hip:" + arch);
        const Problem p = probe(*op, d, l);
        SearchSpace space(m, *op, p, t.info.limits());
        auto all = space.enumerate();
        REQUIRE(all.ok());
        std::vector<Config> configs{m.default_config()};
        if (full && !all->empty()) configs.push_back((*all)[all->size() / 2]);
        for (const Config& c : configs) {
          auto inst = instantiate(tpl, prelude_text("hip"), *op, c, p, t.info.limits());
          if (!inst.ok()) continue;
          INFO(m.name << " " << c.canonical_name() << " " << p.key() << " on " << arch);
          auto out = hiprtc_compile(inst->source, inst->kernel_name, arch, "");
          if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
          CHECK(out->metadata.name == inst->kernel_name);
          CHECK(out->metadata.wavefront_size == 64);
          CHECK(out->metadata.vgpr_count > 0);
          CHECK(out->metadata.sgpr_count > 0);
          CHECK(out->kernel.resources.registers >= out->metadata.vgpr_count);
          // Large register tiles do spill on CDNA (BM32_BN64_TM8_TN4: 40+ VGPRs spilled):
          // reported, for pruning, not an error.
          CHECK(out->kernel.resources.spill_stores >= 0);
          CHECK(out->kernel.resources.max_block_threads ==
                inst->geometry.block[0] * inst->geometry.block[1] * inst->geometry.block[2]);
          CHECK(out->metadata.lds_bytes >= 0);  // manifests' local_memory_bytes are estimates, not checked here
          ++compiled;
        }
      }
    }
  }
  CHECK(compiled > 0);
  WARN("hipRTC compiled " << compiled << " portable instances");
}

TEST_CASE("hipRTC reports errors, refuses targets it aborts on, and the reader checks its input", "[hip][hiprtc]") {
  require_hiprtc();
  const std::string prelude(prelude_text("hip"));
  auto bad = hiprtc_compile(prelude + "KF_KERNEL void k(float* x) { x[0] = y; }\n", "k", "gfx90a", "");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kCompile);
  CHECK(bad.error().message.find("build failed for k (gfx90a): ") == 0);
  CHECK(bad.error().context.find("undeclared identifier 'y'") != std::string::npos);

  for (int act = 0; act <= 3; ++act) {
    const std::string src = "#define KF_BIAS 1\n#define KF_ACTIVATION " + std::to_string(act) + "\n" + prelude +
                            "KF_KERNEL void KF_LAUNCH_BOUNDS(64, 1, 1) k(float* x) { x[KF_THREAD_X] = "
                            "kf_activation(x[KF_THREAD_X]); }\nKF_DYNAMIC_SHARED_BYTES(4096)\n";
    auto out = hiprtc_compile(src, "k", "gfx90a", "");
    INFO("KF_ACTIVATION " << act);
    REQUIRE(out.ok());
    CHECK(out->kernel.resources.max_block_threads == 64);
  }
  auto gfx942 = hiprtc_compile(prelude, "k", "gfx942", "");
  if (!gfx942.ok()) {
    CHECK(gfx942.error().code == ErrorCode::kUnsupported);
  }

  const std::vector<std::uint8_t> not_elf = {1, 2, 3, 4};
  auto r = read_amd_code_object(not_elf);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("not an ELF code object") == 0);
}

TEST_CASE("without an AMD GPU there are no HIP devices and no error", "[hip][hiprtc]") {
  const auto devices = list_hip_devices();
  if (!devices.empty()) {
    WARN("an AMD GPU is present: " << devices.front().name << " " << devices.front().arch);
    return;
  }
  auto dev = open_hip_device(0);
  REQUIRE_FALSE(dev.ok());
  CHECK(dev.error().code == ErrorCode::kNotFound);
}

TEST_CASE("every HIP template compiles alone with its prelude and no defines", "[hip][hiprtc]") {
  require_hiprtc();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  int compiled = 0;
  for (const auto& tpl : *builtins) {
    if (!tpl.manifest.supports_target("hip") || tpl.manifest.is_library()) continue;  // no source
    INFO(tpl.manifest.name);
    auto out = hiprtc_compile(test::alone_source(tpl, "hip"), tpl.manifest.kernel, "gfx90a", "");
    if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
    ++compiled;
  }
  CHECK(compiled >= 8);
}
