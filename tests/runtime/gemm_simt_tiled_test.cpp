// gemm_simt_tiled end to end on OpenCL: instantiate, compile, launch, and check
// every element against GemmOperator's double reference, for every layout,
// awkward shapes (1, 7, 33, 129 and mixes), batch 2 and both validation kinds.
//
// PoCL needs about 3-4 s per instance (build plus first launch), so the
// default set compiles 24 instances (under 2 minutes on 2 cores), each once,
// reused across shapes. KFORGE_TEST_LEVEL=quick also checks fewer shapes;
// full adds a 128x128 tile, every layout for every check and 24 sampled
// configurations (about 8 minutes).
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <initializer_list>
#include <map>
#include <sstream>

#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "generator/search_space.hpp"
#include "runtime/device/device_registry.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/test_level.hpp"

using namespace kforge;

namespace {

int test_intensity() { return static_cast<int>(test::test_level()); }

const TemplateSource& gemm_template() {
  static const TemplateSource tpl = [] {
    auto all = builtin_templates();
    REQUIRE(all.ok());
    for (auto& t : all.value()) {
      if (t.manifest.name == "gemm_simt_tiled") return t;
    }
    FAIL("gemm_simt_tiled is not among the built-in templates");
    return TemplateSource{};
  }();
  return tpl;
}

Device& device() {
  static std::unique_ptr<Device> dev = [] {
    auto d = open_device("opencl:0");
    REQUIRE(d.ok());
    return std::move(d).value();
  }();
  return *dev;
}

/// The source without its first line, a comment naming the problem.
std::string strip_header(const std::string& source) {
  return source.rfind("//", 0) == 0 ? source.substr(source.find('\n') + 1) : source;
}

Problem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                     Layout layout, Dtype dtype) {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}};
  p.layout = layout;
  p.dtype = dtype;
  return p;
}

struct CompileStats {
  int count = 0;
  double total_ms = 0.0;
  double max_ms = 0.0;
};

/// Compiles each (configuration, dtype, layout) once: the source does not
/// depend on M, N, K or batch, only the launch geometry does.
class GemmRunner {
 public:
  explicit GemmRunner(Config config) : config_(std::move(config)) {}

  /// Runs one problem and checks it; returns an empty string or the failure.
  std::string run(const Problem& problem, WorkloadKind kind) {
    const GemmOperator op;
    Device& dev = device();
    auto inst = instantiate(gemm_template(), prelude_text("opencl"), op, config_, problem,
                            dev.info().limits());
    if (!inst.ok()) return "instantiate: " + inst.error().message;
    Kernel* kernel = nullptr;
    const std::string key = std::string(dtype_name(problem.dtype)) + problem.layout.name();
    auto it = kernels_.find(key);
    if (it == kernels_.end()) {
      auto compiled = dev.compiler().compile(inst->source, inst->kernel_name, "");
      if (!compiled.ok()) {
        return compiled.error().message + "\n" + compiled.error().context;
      }
      stats().count++;
      stats().total_ms += compiled->compile_ms;
      stats().max_ms = std::max(stats().max_ms, compiled->compile_ms);
      // PoCL reports the kernel's static local memory: it must match the manifest.
      if (compiled->resources.local_mem_bytes > 0 &&
          compiled->resources.local_mem_bytes != inst->local_memory_bytes) {
        return "local memory: compiler reports " +
               std::to_string(compiled->resources.local_mem_bytes) + " bytes, manifest says " +
               std::to_string(inst->local_memory_bytes);
      }
      auto loaded = dev.load(compiled.value());
      if (!loaded.ok()) return "load: " + loaded.error().message;
      it = kernels_.emplace(key, Entry{inst->source, std::move(loaded).value()}).first;
    }
    if (strip_header(it->second.source) != strip_header(inst->source)) {
      return "instance source depends on the problem dims";
    }
    kernel = it->second.kernel.get();

    const std::uint64_t seed = 1234 + problem.dim("M") * 7 + problem.dim("N") * 131 +
                               problem.dim("K") * 1031;
    Workload w = op.make_workload(problem, seed, kind);
    const Reference ref = op.reference(problem, w);
    std::vector<std::unique_ptr<Buffer>> buffers;
    for (const auto& t : w.tensors) {
      auto b = dev.allocate(t.bytes.size());
      if (!b.ok()) return "allocate: " + b.error().message;
      auto s = dev.write(*b.value(), t.bytes.data(), t.bytes.size());
      if (!s.ok()) return "write: " + s.error().message;
      buffers.push_back(std::move(b).value());
    }
    std::vector<KernelArg> args;
    for (const auto& a : w.args) {
      switch (a.kind) {
        case OperatorArg::Kind::kTensor: args.push_back(KernelArg::of(*buffers[a.tensor])); break;
        case OperatorArg::Kind::kInt32: args.push_back(KernelArg::of(a.i32)); break;
        case OperatorArg::Kind::kFloat32: args.push_back(KernelArg::of(a.f32)); break;
      }
    }
    auto ms = dev.launch(*kernel, args, inst->geometry);
    if (!ms.ok()) return "launch: " + ms.error().message;

    HostTensor& out = w.tensors[w.output];
    auto s = dev.read(*buffers[w.output], out.bytes.data(), out.bytes.size());
    if (!s.ok()) return "read: " + s.error().message;
    return compare(problem, kind, out, ref);
  }

  const Config& config() const { return config_; }

  static CompileStats& stats() {
    static CompileStats s;
    return s;
  }

 private:
  std::string compare(const Problem& problem, WorkloadKind kind, const HostTensor& out,
                      const Reference& ref) const {
    const float* got = out.f32();
    std::size_t bad = 0;
    std::ostringstream first;
    for (std::size_t i = 0; i < out.elements(); ++i) {
      const double threshold = ref.tolerance * ref.scale[i];
      const double v = got[i];
      // NaN fails: the comparison is written so that it cannot pass.
      if (!(std::fabs(v - ref.value[i]) <= threshold)) {
        if (bad++ == 0) {
          first << "first bad index " << i << ": value " << v << ", reference " << ref.value[i]
                << ", threshold " << threshold;
        }
      }
    }
    if (bad == 0) return {};
    std::ostringstream msg;
    msg << "template gemm_simt_tiled, config " << config_.canonical_name() << ", problem "
        << problem.key() << ", "
        << (kind == WorkloadKind::kPoisonedOutput ? "poisoned output (beta = 0)"
                                                  : "accumulate (beta != 0)")
        << ": " << bad << " of " << out.elements() << " elements wrong; " << first.str();
    return msg.str();
  }

  struct Entry {
    std::string source;
    std::unique_ptr<Kernel> kernel;
  };
  Config config_;
  std::map<std::string, Entry> kernels_;
};

Config config_of(const std::string& canonical) {
  auto c = Config::parse(canonical);
  REQUIRE(c.ok());
  return c.value();
}

std::vector<Layout> layouts(std::initializer_list<const char*> names) {
  std::vector<Layout> out;
  for (const char* l : names) out.push_back(*parse_layout(l));
  return out;
}

std::vector<Layout> all_layouts() { return layouts({"NN", "NT", "TN", "TT"}); }

/// NN and TT between them load each operand both ways (contiguous along k,
/// and along m or n); every layout at intensity 2.
std::vector<Layout> both_load_paths() {
  return test_intensity() >= 2 ? all_layouts() : layouts({"NN", "TT"});
}

/// M, N, K triples: every combination of {1, 7, 33, 129} (or a diagonal plus
/// mixes at intensity 0).
std::vector<std::array<std::int64_t, 3>> shapes() {
  const std::int64_t sizes[] = {1, 7, 33, 129};
  std::vector<std::array<std::int64_t, 3>> out;
  if (test_intensity() <= 0) {
    for (auto s : sizes) out.push_back({s, s, s});
    out.push_back({129, 7, 33});
    out.push_back({7, 129, 1});
    out.push_back({33, 1, 129});
    return out;
  }
  for (auto m : sizes) {
    for (auto n : sizes) {
      for (auto k : sizes) out.push_back({m, n, k});
    }
  }
  return out;
}

void check_config(const Config& config, Dtype dtype, const std::vector<Layout>& layout_set,
                  const std::vector<std::array<std::int64_t, 3>>& dims, std::int64_t batch) {
  GemmRunner runner(config);
  for (const Layout& layout : layout_set) {
    for (const auto& [m, n, k] : dims) {
      const Problem p = gemm_problem(m, n, k, batch, layout, dtype);
      for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
        const std::string failure = runner.run(p, kind);
        if (!failure.empty()) {
          FAIL_CHECK(config.canonical_name() << " " << p.key() << ": " << failure);
          return;  // one failure per configuration is enough to read
        }
      }
    }
  }
  SUCCEED();
}

}  // namespace

TEST_CASE("gemm_simt_tiled kernel file compiles on its own with the prelude", "[opencl][gemm]") {
  const TemplateSource& tpl = gemm_template();
  const std::string source = std::string(prelude_text("opencl")) + "\n" + tpl.kernel_text;
  auto compiled = device().compiler().compile(source, tpl.manifest.kernel, "");
  REQUIRE(compiled.ok());
  CHECK(compiled->program);
}

TEST_CASE("gemm_simt_tiled default configuration is valid and modest", "[opencl][gemm]") {
  const TemplateSource& tpl = gemm_template();
  CHECK(tpl.manifest.default_config().canonical_name() == "BK8_BM32_BN32_PAD0_TM2_TN2_VW1");
  const GemmOperator op;
  const Problem p = gemm_problem(256, 256, 256, 1, Layout{}, Dtype::kF32);
  SearchSpace space(tpl.manifest, op, p, device().info().limits());
  auto valid = space.is_valid(tpl.manifest.default_config());
  REQUIRE(valid.ok());
  CHECK(valid.value());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  CHECK(all->size() > 100);  // a real search space
}

TEST_CASE("gemm_simt_tiled is correct for every layout and awkward shapes", "[opencl][gemm]") {
  const auto dims = shapes();
  // default; 64x64 tile with VW=4 and PAD=1; non-square tile with VW=2; at
  // intensity 2 a 128x128 tile with 8x8 register tiles (about 12 s per build).
  std::vector<const char*> configs = {"BK8_BM32_BN32_PAD0_TM2_TN2_VW1",
                                      "BK16_BM64_BN64_PAD1_TM4_TN4_VW4",
                                      "BK16_BM64_BN32_PAD1_TM4_TN2_VW2"};
  if (test_intensity() >= 2) configs.push_back("BK8_BM128_BN128_PAD0_TM8_TN8_VW4");
  for (const char* c : configs) {
    SECTION(c) { check_config(config_of(c), Dtype::kF32, all_layouts(), dims, 2); }
  }
}

TEST_CASE("gemm_simt_tiled reads f16 and bf16 inputs", "[opencl][gemm]") {
  const std::vector<std::array<std::int64_t, 3>> dims = {{33, 33, 33}, {129, 7, 33}, {7, 1, 129}};
  // VW=4 exercises both the vector loads and, in the tails, the scalar ones.
  for (Dtype dtype : {Dtype::kF16, Dtype::kBF16}) {
    SECTION(std::string(dtype_name(dtype)) + " VW4") {
      check_config(config_of("BK16_BM64_BN64_PAD1_TM4_TN4_VW4"), dtype, both_load_paths(), dims,
                   2);
    }
    if (test_intensity() >= 2) {
      SECTION(std::string(dtype_name(dtype)) + " default") {
        check_config(gemm_template().manifest.default_config(), dtype, all_layouts(), dims, 2);
      }
    }
  }
}

TEST_CASE("sampled valid gemm_simt_tiled configurations are correct", "[opencl][gemm]") {
  // Every configuration the constraints admit must be correct: check an evenly
  // spaced sample of the whole valid space on awkward shapes.
  const TemplateSource& tpl = gemm_template();
  const GemmOperator op;
  const Problem p = gemm_problem(129, 129, 129, 1, Layout{}, Dtype::kF32);
  SearchSpace space(tpl.manifest, op, p, device().info().limits());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  REQUIRE_FALSE(all->empty());
  const std::size_t samples = test_intensity() >= 2 ? 24 : 4;
  const std::vector<std::array<std::int64_t, 3>> dims = {{129, 7, 33}, {7, 33, 129}, {1, 129, 7}};
  const std::size_t step = std::max<std::size_t>(1, all->size() / samples);
  for (std::size_t i = step / 2; i < all->size(); i += step) {
    const Config& c = (*all)[i];
    SECTION(c.canonical_name()) { check_config(c, Dtype::kF32, both_load_paths(), dims, 2); }
  }
}

TEST_CASE("gemm_simt_tiled compile time", "[opencl][gemm][.report]") {
  // Not a check: prints what the GEMM tests above measured (run them first in
  // the same process, e.g. `opencl_tests "[gemm]" "[.report]"`).
  const CompileStats& s = GemmRunner::stats();
  if (s.count > 0) {
    std::cout << "gemm_simt_tiled: " << s.count << " instances compiled, mean "
              << s.total_ms / s.count << " ms, max " << s.max_ms << " ms\n";
  }
}
