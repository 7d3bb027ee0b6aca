// NVRTC compiles every portable template (every dtype and layout it declares,
// a deterministic sample of configurations) and every configuration of the
// tensor-core GEMM for sm_80 and sm_90, with no GPU. Needs NVRTC (the CUDA
// toolkit); without it these tests fail, saying so.
#include <catch2/catch.hpp>

#include <set>

#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/occupancy.hpp"
#include "runtime/device/target.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/runtime/template_alone.hpp"
#include "tests/test_level.hpp"

using namespace kforge;

namespace {

constexpr const char* kArchs[] = {"sm_80", "sm_90"};

void require_nvrtc() {
  auto v = nvrtc_version();
  if (!v.ok()) FAIL("NVRTC is required for this test (install the CUDA toolkit): " << v.error().message);
}

/// A problem for `op` with every dim 96 (batch 1), normalized.
Problem probe(const Operator& op, Dtype d, const Layout& l) {
  Problem p;
  p.op = std::string(op.name());
  for (const auto& dim : op.dims()) p.dims[dim] = dim == "batch" ? 1 : 96;
  p.dtype = d;
  p.layout = l;
  auto n = op.normalize(p);
  REQUIRE(n.ok());
  return *n;
}

/// The default configuration plus `n` spread evenly over the space.
std::vector<Config> sample(const std::vector<Config>& all, const Config& def, std::size_t n) {
  std::vector<Config> out{def};
  if (all.empty() || n == 0) return out;
  for (std::size_t i = 0; i < n; ++i) {
    const Config& c = all[(i * all.size()) / n + (all.size() / (2 * n))];
    if (c != def) out.push_back(c);
  }
  return out;
}

struct Compiled {
  int count = 0;
  std::set<std::string> templates;
};

}  // namespace

TEST_CASE("NVRTC compiles every portable template for sm_80 and sm_90", "[cuda][nvrtc]") {
  require_nvrtc();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  // core: the default configuration of every third dtype x layout combination,
  // alternating architectures; full: every combination, 4 more configurations, both.
  const bool full = test::test_level() == test::TestLevel::kFull;
  const std::size_t per_combo = full ? 4 : 0;
  Compiled done;
  for (const auto& tpl : *builtins) {
    const auto& m = tpl.manifest;
    if (!m.supports_target("cuda") || !m.arch_guard.empty() || m.is_library()) continue;
    const Operator* op = find_operator(m.op);
    REQUIRE(op != nullptr);
    std::size_t combo = 0;
    for (Dtype d : m.dtypes) {
      for (const Layout& l : m.layouts) {
        const Problem p = probe(*op, d, l);
        // core: every third combination (rotating), each on one architecture.
        const std::size_t idx = combo++;
        if (!full && idx % 3 != 0) continue;
        const char* arch = kArchs[(idx / 3) % 2];
        const Target t = *parse_target(std::string("cuda:") + arch);
        SearchSpace space(m, *op, p, t.info.limits());
        auto all = space.enumerate();
        REQUIRE(all.ok());
        for (const Config& c : sample(*all, m.default_config(), per_combo)) {
          auto inst = instantiate(tpl, prelude_text("cuda"), *op, c, p, t.info.limits());
          if (!inst.ok()) continue;  // the default may not fit the probe problem
          INFO(m.name << " " << c.canonical_name() << " " << p.key() << " on " << arch);
          for (const char* a : kArchs) {
            if (!full && a != arch) continue;
            auto out = nvrtc_compile(inst->source, inst->kernel_name, a, "");
            if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
            CHECK(out->kernel.resources.registers > 0);
            CHECK(out->kernel.resources.spill_stores >= 0);
            CHECK(out->kernel.resources.max_block_threads ==
                  inst->geometry.block[0] * inst->geometry.block[1] * inst->geometry.block[2]);
            ++done.count;
          }
          done.templates.insert(m.name);
        }
      }
    }
  }
  CHECK(done.templates.count("gemm_simt_tiled") == 1);
  WARN("NVRTC compiled " << done.count << " portable instances of " << done.templates.size() << " templates");
}

TEST_CASE("every gemm_mma_sync configuration compiles for sm_80 and sm_90", "[cuda][nvrtc]") {
  require_nvrtc();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const TemplateSource* tpl = nullptr;
  for (const auto& t : *builtins)
    if (t.manifest.name == "gemm_mma_sync") tpl = &t;
  REQUIRE(tpl != nullptr);
  CHECK(tpl->manifest.targets == std::vector<std::string>{"cuda"});
  CHECK(tpl->manifest.arch_guard == std::vector<std::string>{"sm_80+"});
  const Operator* op = find_operator("gemm");
  int compiled = 0, index = 0;
  for (const char* arch : kArchs) {
    const Target t = *parse_target(std::string("cuda:") + arch);
    REQUIRE(check_arch_guard(tpl->manifest, "cuda", arch).ok());
    const Problem base = probe(*op, Dtype::kF16, *parse_layout("NN"));
    SearchSpace space(tpl->manifest, *op, base, t.info.limits());
    auto all = space.enumerate();
    REQUIRE(all.ok());
    REQUIRE(all->size() >= 16);
    for (const Config& c : *all) {
      // Rotate dtype and layout over the configurations so every one is covered.
      const Dtype d = tpl->manifest.dtypes[static_cast<std::size_t>(index) % tpl->manifest.dtypes.size()];
      const Layout& l = tpl->manifest.layouts[static_cast<std::size_t>(index / 2) % tpl->manifest.layouts.size()];
      ++index;
      const Problem p = probe(*op, d, l);
      auto inst = instantiate(*tpl, prelude_text("cuda"), *op, c, p, t.info.limits());
      REQUIRE(inst.ok());
      INFO(c.canonical_name() << " " << p.key() << " on " << arch);
      auto out = nvrtc_compile(inst->source, inst->kernel_name, arch, "");
      if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
      const ResourceReport& r = out->kernel.resources;
      CHECK(r.registers > 0);
      CHECK(out->dynamic_shared_bytes > 0);
      CHECK(r.local_mem_bytes >= out->dynamic_shared_bytes);
      CHECK(r.max_block_threads == inst->geometry.block[0]);
      ++compiled;
    }
  }
  WARN("NVRTC compiled " << compiled << " gemm_mma_sync configurations");
}

TEST_CASE("every CUDA template compiles alone with its prelude and no defines", "[cuda][nvrtc]") {
  require_nvrtc();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  std::set<std::string> compiled;
  for (const auto& tpl : *builtins) {
    if (!tpl.manifest.supports_target("cuda") || tpl.manifest.is_library()) continue;  // no source
    INFO(tpl.manifest.name);
    // sm_80: the oldest architecture any built-in arch guard asks for.
    auto out = nvrtc_compile(test::alone_source(tpl, "cuda"), tpl.manifest.kernel, "sm_80", "");
    if (!out.ok()) FAIL(out.error().message << "\n" << out.error().context);
    compiled.insert(tpl.manifest.name);
  }
  CHECK(compiled.count("gemm_mma_sync") == 1);
  CHECK(compiled.size() >= 9);
}

TEST_CASE("the CUDA prelude's epilogue compiles for every activation", "[cuda][nvrtc]") {
  require_nvrtc();
  for (int act = 0; act <= 3; ++act) {
    const std::string src = "#define KF_BIAS 1\n#define KF_ACTIVATION " + std::to_string(act) + "\n" +
                            std::string(prelude_text("cuda")) +
                            "KF_KERNEL void k(float* x) { x[KF_THREAD_X] = kf_activation(x[KF_THREAD_X]); }\n";
    auto out = nvrtc_compile(src, "k", "sm_80", "");
    INFO("KF_ACTIVATION " << act);
    REQUIRE(out.ok());
  }
  // A compile error names the kernel and carries the log.
  auto bad = nvrtc_compile(std::string(prelude_text("cuda")) + "KF_KERNEL void k(float* x) { x[0] = y; }\n", "k",
                           "sm_90", "");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kCompile);
  CHECK(bad.error().message.find("build failed for k (sm_90): ") == 0);
  CHECK(bad.error().context.find("identifier \"y\" is undefined") != std::string::npos);
}

TEST_CASE("NVRTC 12.9 and later compile without NVRTC's own cache, so every compile has its ptxas report",
          "[cuda][nvrtc]") {
  require_nvrtc();
  const std::string source = "extern \"C\" __global__ void kf_probe(float* x) { x[threadIdx.x] *= 2.0f; }\n";
  auto v = nvrtc_version();
  REQUIRE(v.ok());
  const int major = std::stoi(*v), minor = std::stoi(v->substr(v->find('.') + 1));
  const bool caches = major > 12 || (major == 12 && minor >= 9);
  INFO("NVRTC " << *v);
  // The same source twice, as two tuning processes would compile it.
  for (int round = 0; round < 2; ++round) {
    auto out = nvrtc_compile(source, "kf_probe", "sm_90", "");
    REQUIRE(out.ok());
    CHECK((out->kernel.options.find("--no-cache") != std::string::npos) == caches);
    CHECK(out->kernel.resources.registers > 0);
    CHECK(out->kernel.resources.spill_stores == 0);
  }
}

TEST_CASE("NVRTC's ptxas remarks reach the resource report, and a serialized wgmma is pruned", "[cuda][nvrtc]") {
  require_nvrtc();
  // One wgmma whose accumulator a call reads before the wait (ptxas
  // serializes the pipeline: C7514), and a setmaxnreg ptxas cannot honour.
  const std::string source = R"(
__device__ __noinline__ float kf_side(float x) { return x * 2.0f + 1.0f; }
extern "C" __global__ void __launch_bounds__(128) kf_wgmma_probe(float* out, unsigned long long da,
                                                                 unsigned long long db) {
  float d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  asm volatile("wgmma.fence.sync.aligned;\n");
  asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, 1, 1, 1, 0, 0;\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db));
  asm volatile("wgmma.commit_group.sync.aligned;\n");
  d[0] = kf_side(d[0]);
  asm volatile("wgmma.wait_group.sync.aligned 0;\n");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  for (int i = 0; i < 8; ++i) out[threadIdx.x * 8 + i] = d[i];
}
)";
  auto out = nvrtc_compile(source, "kf_wgmma_probe", "sm_90a", "");
  REQUIRE(out.ok());
  const ResourceReport& r = out->kernel.resources;
  INFO(out->kernel.log);
  bool setmaxnreg_ignored = false, serialized = false;
  for (const auto& d : r.diagnostics) {
    setmaxnreg_ignored = setmaxnreg_ignored || d.code == "C7508";
    serialized = serialized || d.serializes_tensor_ops;
  }
  CHECK(setmaxnreg_ignored);
  REQUIRE(serialized);
  DeviceInfo target;
  target.backend = "cuda";
  target.arch = "sm_90a";
  const auto why = prune_reason(r, target, 128);
  REQUIRE(why.has_value());
  CHECK(why->find("wgmma.mma_async instructions are serialized") != std::string::npos);

  // The same kernel with the accumulator read after the wait is not serialized.
  std::string fixed = source;
  const std::string early = "  d[0] = kf_side(d[0]);\n";
  fixed.erase(fixed.find(early), early.size());
  auto clean = nvrtc_compile(fixed, "kf_wgmma_probe", "sm_90a", "");
  REQUIRE(clean.ok());
  for (const auto& d : clean->kernel.resources.diagnostics) CHECK_FALSE(d.serializes_tensor_ops);
}
