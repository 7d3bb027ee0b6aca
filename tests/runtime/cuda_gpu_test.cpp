// On a real CUDA GPU: every gemm template that targets CUDA (portable and
// tensor-core) across dtypes, layouts and tails, a short tuning sweep and a
// runtime lookup. Without a CUDA device each test prints "SKIPPED: <why>"
// with WARN, which ctest reports as skipped (SKIP_REGULAR_EXPRESSION).
#include <catch2/catch.hpp>

#include <cstring>

#include "arch_guard.hpp"
#include "builtin_templates.hpp"
#include "cuda_backend.hpp"
#include "database.hpp"
#include "device_registry.hpp"
#include "instance.hpp"
#include "lookup.hpp"
#include "operator.hpp"
#include "search_space.hpp"
#include "test_level.hpp"
#include "test_util.hpp"
#include "tuner.hpp"
#include "validator.hpp"

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
std::string run_and_validate(Device& dev, const Operator& op, const Instance& inst, const Problem& p) {
  auto compiled = dev.compiler().compile(inst.source, inst.kernel_name, "");
  if (!compiled.ok()) return "compile: " + compiled.error().message;
  auto kernel = dev.load(*compiled);
  if (!kernel.ok()) return "load: " + kernel.error().message;
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
    auto ms = dev.launch(**kernel, args, inst.geometry);
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
    if (m.op != "gemm" || !m.supports_target("cuda")) continue;
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
  CHECK(sel->rule == "exact");
}
