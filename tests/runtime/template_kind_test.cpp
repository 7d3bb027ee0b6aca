// Template kinds: how a template becomes a loaded kernel, through the
// BinarySource of its caller (compile now, a kept binary, a refused one).
#include <catch2/catch.hpp>

#include "generator/gemm_operator.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

Problem small_gemm() {
  return Problem{"gemm", {{"M", 32}, {"N", 32}, {"K", 32}, {"batch", 1}}, Dtype::kF32, Layout{}, {}, {}};
}

/// A catalog template with its default configuration instantiated for `p` on `device`.
struct Built {
  TemplateSource tpl;
  Config config;
  Instance inst;
  Built(Device& device, const std::string& name, const Problem& p) {
    auto all = builtin_templates();
    REQUIRE(all.ok());
    auto it = std::find_if(all->begin(), all->end(), [&](const TemplateSource& t) { return t.manifest.name == name; });
    REQUIRE(it != all->end());
    tpl = *it;
    config = tpl.manifest.default_config();
    auto made = instantiate(tpl, prelude_text(device.info().backend), *find_operator(p.op), config, p,
                            device.info().limits());
    REQUIRE(made.ok());
    inst = std::move(*made);
  }
};

/// Hands out one kept binary (as a cache would), counting what the kind asks of it.
class KeptBinary final : public BinarySource {
 public:
  explicit KeptBinary(CompiledKernel kept) : kept_(std::move(kept)) {}
  int obtained = 0, replaced = 0, admitted = 0;
  bool refuse_admission = false;
  Result<CompiledKernel> obtain(const BuildInput&, const Compile&, KernelBuild& out) override {
    ++obtained;
    out.origin = KernelOrigin::kDisk;
    out.cache_hit = true;
    return kept_;
  }
  Result<CompiledKernel> replace_refused(const BuildInput&, const Compile& compile, const Error&,
                                         KernelBuild& out) override {
    ++replaced;
    out.origin = KernelOrigin::kCompiled;
    out.cache_hit = false;
    return compile();
  }
  Status admit(const BuildInput&, const CompiledKernel&) override {
    ++admitted;
    if (refuse_admission) return Error{ErrorCode::kResource, "spills 8 registers", {}};
    return ok_status();
  }

 private:
  CompiledKernel kept_;
};

}  // namespace

TEST_CASE("template kinds: the manifest's kind chooses the build", "[template_kind]") {
  auto all = builtin_templates();
  REQUIRE(all.ok());
  int sources = 0, libraries = 0;
  for (const TemplateSource& t : *all) {
    const TemplateKind& kind = template_kind(t);
    CHECK(kind.id() == t.manifest.kind);
    if (kind.id() == TemplateKindId::kSource) {
      ++sources;
      CHECK(kind.name() == "source");
      CHECK(kind.compiles());
      CHECK(kind.unavailable(t).empty());
    } else {
      ++libraries;
      CHECK(kind.name() == "library");
      CHECK_FALSE(kind.compiles());
    }
  }
  CHECK(sources > 10);
  CHECK(libraries >= 3);  // clblast, cublaslt, hipblaslt
}

TEST_CASE("template kinds: each kind names the compiler that builds it for a device", "[template_kind]") {
  auto device = open_device("auto");
  REQUIRE(device.ok());
  CHECK(source_kind().compiler(**device) == &(*device)->compiler());
  CHECK(library_kind().compiler(**device) == nullptr);  // a bound call: nothing compiled
  CHECK(triton_kind().compiler(**device) == nullptr);   // Triton's own, in a helper process
}

TEST_CASE("template kinds: a library template is unavailable for its library's reason", "[template_kind]") {
  auto all = builtin_templates();
  REQUIRE(all.ok());
  auto it = std::find_if(all->begin(), all->end(), [](const TemplateSource& t) { return t.manifest.is_library(); });
  REQUIRE(it != all->end());
  TemplateSource t = *it;
  t.library_unavailable = "libcublasLt.so.13: not found";
  CHECK(template_kind(t).unavailable(t) == "libcublasLt.so.13: not found");
  auto input_device = open_device("auto");
  REQUIRE(input_device.ok());
  Built b(**input_device, "gemm_simt_tiled", small_gemm());
  CHECK(template_kind(t).compile(**input_device, t, b.inst).error().code == ErrorCode::kUnsupported);
}

TEST_CASE("template kinds: a source template compiles and loads through its caller's binaries",
          "[template_kind]") {
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const Problem p = small_gemm();
  Built b(**device, "gemm_simt_tiled", p);
  const BuildInput input{**device, b.tpl, b.inst, p, b.config};
  CompileAlways always;
  auto built = template_kind(b.tpl).build(input, always);
  REQUIRE(built.ok());
  CHECK(built->origin == KernelOrigin::kCompiled);
  CHECK(built->kernel != nullptr);
  REQUIRE(built->binary.has_value());
  CHECK(built->binary->kernel_name == b.inst.kernel_name);
  CHECK(built->library_call.is_null());

  SECTION("a kept binary the device refuses is replaced by a fresh compile") {
    CompiledKernel garbage;
    garbage.kernel_name = b.inst.kernel_name;
    garbage.binary = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
    KeptBinary kept(garbage);
    auto again = template_kind(b.tpl).build(input, kept);
    REQUIRE(again.ok());
    CHECK(kept.obtained == 1);
    CHECK(kept.replaced == 1);
    CHECK(again->origin == KernelOrigin::kCompiled);
    CHECK(again->kernel != nullptr);
  }
  SECTION("a binary the caller does not admit is never loaded") {
    KeptBinary kept(*built->binary);
    kept.refuse_admission = true;
    auto refused = template_kind(b.tpl).build(input, kept);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message == "spills 8 registers");
    CHECK(kept.admitted == 1);
    CHECK(kept.replaced == 0);
  }
}
