// On a real CUDA GPU: every gemm template that targets CUDA (portable and
// tensor-core) across dtypes, layouts and tails, a short tuning sweep and a
// runtime lookup. Without a CUDA device each test prints "SKIPPED: <why>"
// with WARN, which ctest reports as skipped (SKIP_REGULAR_EXPRESSION).
#include <catch2/catch.hpp>
#include <cstring>

#include "db/database.hpp"
#include "generator/instance.hpp"
#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/libraries/library_kernel.hpp"
#include "runtime/libraries/library_policy.hpp"
#include "runtime/lookup/lookup.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/test_level.hpp"
#include "tests/test_util.hpp"
#include "tuner/measure/validator.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

/// The first CUDA device, or nullptr after printing why the test is skipped.
std::unique_ptr<Device> cuda_device_or_skip() {
  if (list_cuda_devices().empty()) {
    const std::string why = cuda_unavailable_reason();
    WARN("SKIPPED: no CUDA device: " << (why.empty() ? "the driver reports none" : why));
    return nullptr;
  }
  auto dev = open_device("cuda:0");
  REQUIRE(dev.ok());
  return std::move(dev).value();
}

/// Runs one instance on `dev` against the operator's reference; returns a failure description or "".
std::string validate_kernel(Device& dev, const Operator& op, Kernel& kernel, const LaunchGeometry& geometry,
                            const Problem& p);

std::string run_and_validate(Device& dev, const Operator& op, const Instance& inst, const Problem& p) {
  auto compiled = dev.compiler().compile(inst.source, inst.kernel_name, "");
  if (!compiled.ok()) return "compile: " + compiled.error().message;
  auto kernel = dev.load(*compiled);
  if (!kernel.ok()) return "load: " + kernel.error().message;
  return validate_kernel(dev, op, **kernel, inst.geometry, p);
}

/// Both validation runs of `kernel` (compiled or a library call) against the reference; "" when they pass.
std::string validate_kernel(Device& dev, const Operator& op, Kernel& kernel, const LaunchGeometry& geometry,
                            const Problem& p) {
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    Workload w = op.make_workload(p, 7, kind);
    const Reference ref = op.reference(p, w);
    std::vector<std::unique_ptr<Buffer>> bufs;
    for (const auto& t : w.tensors) {
      auto b = dev.allocate(std::max<std::size_t>(t.bytes.size(), 4));
      if (!b.ok()) return "allocate: " + b.error().message;
      if (auto s = dev.write(**b, t.bytes.data(), t.bytes.size()); !s.ok()) return s.error().message;
      bufs.push_back(std::move(*b));
    }
    std::vector<KernelArg> args;
    for (const auto& a : w.args) {
      if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
      else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
      else args.push_back(KernelArg::of(a.f32));
    }
    auto ms = dev.launch(kernel, args, geometry);
    if (!ms.ok()) return "launch: " + ms.error().message;
    const HostTensor& out = w.tensors[w.output];
    std::vector<float> result(out.elements());
    if (auto s = dev.read(*bufs[w.output], result.data(), result.size() * sizeof(float)); !s.ok()) {
      return s.error().message;
    }
    ValidationResult v = validate_output(result.data(), result.size(), ref);
    if (!v.passed) return v.describe();
  }
  return "";
}

}  // namespace

TEST_CASE("every CUDA gemm template computes correctly on the GPU across dtypes, layouts and tails",
          "[gpu][cuda]") {
  auto dev = cuda_device_or_skip();
  if (!dev) return;
  const DeviceInfo& info = dev->info();
  auto builtins = builtin_templates();
  REQUIRE(builtins.ok());
  const Operator* op = find_operator("gemm");
  const std::vector<std::array<int, 3>> shapes = {{128, 128, 64}, {77, 40, 24}, {1, 8, 8}, {16, 264, 136}};
  int ran = 0;
  for (const auto& tpl : *builtins) {
    const auto& m = tpl.manifest;
    if (m.op != "gemm" || !m.supports_target("cuda") || m.is_library()) continue;  // compiled here
    if (Status g = check_arch_guard(m, "cuda", info.arch); !g.ok()) {
      WARN(g.error().message << ": skipped, the portable templates cover this device");
      continue;
    }
    for (Dtype d : m.dtypes) {
      for (const Layout& l : m.layouts) {
        for (const auto& s : shapes) {
          Problem p;
          p.op = "gemm";
          p.dims = {{"M", s[0]}, {"N", s[1]}, {"K", s[2]}, {"batch", s == shapes.back() ? 2 : 1}};
          p.dtype = d;
          p.layout = l;
          p = *op->normalize(p);
          SearchSpace space(m, *op, p, info.limits());
          auto all = space.enumerate();
          REQUIRE(all.ok());
          if (all->empty()) continue;  // outside the template's envelope
          for (const Config& c : {all->front(), all->back()}) {
            auto inst = instantiate(tpl, prelude_text("cuda"), *op, c, p, info.limits());
            REQUIRE(inst.ok());
            INFO(m.name << " " << c.canonical_name() << " " << p.key());
            CHECK(run_and_validate(*dev, *op, *inst, p) == "");
            ++ran;
          }
        }
      }
    }
  }
  CHECK(ran > 0);
}

TEST_CASE("a short tuning sweep on the GPU finds a validated winner, and the lookup serves it", "[gpu][cuda]") {
  auto dev = cuda_device_or_skip();
  if (!dev) return;
  test::TempDir dir;
  const std::string db_path = dir.file("gpu.db");
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const Operator* op = find_operator("gemm");
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", 256}, {"N", 256}, {"K", 256}, {"batch", 1}};
  p.dtype = Dtype::kF16;
  p.layout = *parse_layout("NN");
  p = *op->normalize(p);
  {
    auto db = Database::open(db_path, Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    TuneRequest req;
    req.problem = p;
    for (const auto* t : catalog->for_op("gemm", "cuda")) {
      if (check_arch_guard(t->manifest, "cuda", dev->info().arch).ok()) req.templates.push_back(t);
    }
    req.max_evals = 8;
    req.protocol.min_reps = 3;
    req.protocol.max_reps = 5;
    Tuner tuner(*dev, **db, *op);
    auto s = tuner.run(req);
    REQUIRE(s.ok());
    REQUIRE(s->winner.has_value());
    CHECK(s->winner->status == CandidateStatus::kOk);
    CHECK(s->winner->timing.median_ms > 0);
  }
  auto lookup = Lookup::open(db_path, *dev, *catalog);
  REQUIRE(lookup.ok());
  auto sel = (*lookup)->select(p);
  REQUIRE(sel.ok());
  CHECK(sel->rule == SelectionRule::kExact);
}

TEST_CASE("cuBLASLt tuned beside the kernels: the lookup takes the faster and replays the stored algorithm",
          "[gpu][cuda][cublaslt]") {
  auto dev = cuda_device_or_skip();
  if (!dev) return;
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* lt = catalog->find("gemm_cublaslt");
  REQUIRE(lt);
  if (!lt->library_unavailable.empty()) {
    WARN("SKIPPED: " << lt->library_unavailable);
    return;
  }
  const Operator* op = find_operator("gemm");
  REQUIRE(op);
  test::TempDir dir;
  const std::string db_path = dir.file("lt.db");
  for (Dtype dtype : {Dtype::kF32, Dtype::kBF16}) {
    Problem p;
    p.op = "gemm";
    p.dims = {{"M", 256}, {"N", 256}, {"K", 256}, {"batch", 1}};
    p.dtype = dtype;
    p.layout = *parse_layout("NN");
    p = *op->normalize(p);
    INFO(p.key());
    {
      auto db = Database::open(db_path, Database::Mode::kReadWrite);
      REQUIRE(db.ok());
      TuneRequest req;
      req.problem = p;
      for (const auto* t : catalog->for_op("gemm", "cuda"))
        if (check_arch_guard(t->manifest, "cuda", dev->info().arch).ok() && t->manifest.supports(dtype))
          req.templates.push_back(t);
      req.max_evals = 16;
      req.protocol.min_reps = 5;
      req.protocol.max_reps = 10;
      Tuner tuner(*dev, **db, *op);
      auto s = tuner.run(req);
      REQUIRE(s.ok());
      REQUIRE(s->winner.has_value());
    }
    auto lookup = Lookup::open(db_path, *dev, *catalog);
    REQUIRE(lookup.ok());
    auto sel = (*lookup)->select(p);
    REQUIRE(sel.ok());
    INFO(sel->explanation);
    CHECK(sel->rule == SelectionRule::kExact);
    REQUIRE_FALSE(sel->library_best.empty());
    if (!sel->kernel_best.empty())
      CHECK((sel->template_name == "gemm_cublaslt") == (sel->library_best_ms < sel->kernel_best_ms));
    // Forced to the library: its stored algorithm is bound again, not asked of the heuristic.
    REQUIRE((*lookup)->set_library_policy("gemm", LibraryPolicy::kForce).ok());
    auto forced = (*lookup)->select(p);
    REQUIRE(forced.ok());
    CHECK(forced->template_name == "gemm_cublaslt");
    REQUIRE_FALSE(forced->library_call.empty());
    auto prepared = (*lookup)->prepare(*forced);
    REQUIRE(prepared.ok());
    const auto* call = dynamic_cast<const LibraryKernel*>((*prepared)->kernel);
    REQUIRE(call);
    const nlohmann::json identity = call->call_identity();
    INFO(identity.dump());
    if (identity["algo"].is_object()) {
      CHECK(identity.value("replayed", false));
      CHECK(identity["algo"] == nlohmann::json::parse(forced->library_call)["algo"]);
    }
  }
}

TEST_CASE("a cuBLASLt algorithm bound from its stored identity validates", "[gpu][cuda][cublaslt]") {
  auto dev = cuda_device_or_skip();
  if (!dev) return;
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* lt = catalog->find("gemm_cublaslt");
  REQUIRE(lt);
  if (!lt->library_unavailable.empty()) {
    WARN("SKIPPED: " << lt->library_unavailable);
    return;
  }
  const Operator* op = find_operator("gemm");
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", 96}, {"N", 80}, {"K", 64}, {"batch", 2}};
  p.dtype = Dtype::kBF16;
  p.layout = *parse_layout("TN");
  p = *op->normalize(p);
  const Config cfg = *Config::parse("ALGO0");
  auto inst = instantiate(*lt, prelude_text("cuda"), *op, cfg, p, dev->info().limits());
  REQUIRE(inst.ok());
  auto first = bind_library_call(*dev, *lt, *inst, p, cfg);
  REQUIRE(first.ok());
  const nlohmann::json stored = dynamic_cast<const LibraryKernel&>(**first).call_identity();
  INFO(stored.dump());
  REQUIRE(stored["algo"].is_object());
  auto again = bind_library_call(*dev, *lt, *inst, p, cfg, stored);
  REQUIRE(again.ok());
  const nlohmann::json replayed = dynamic_cast<const LibraryKernel&>(**again).call_identity();
  CHECK(replayed.value("replayed", false));
  CHECK(replayed["algo"] == stored["algo"]);
  CHECK(validate_kernel(*dev, *op, **again, inst->geometry, p) == "");
}
