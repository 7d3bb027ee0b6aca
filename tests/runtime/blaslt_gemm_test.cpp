// gemm_cublaslt and gemm_hipblaslt without a GPU: each library candidate
// bound on the fake CUDA or HIP device (fake_gpu_driver.hpp) against a fake
// libcublasLt or libhipblaslt (fake_cublaslt.cpp, fake_hipblaslt.cpp) that
// computes the matmul on the fake's host memory, checked against the gemm
// operator's double-precision reference; the heuristic's algorithms, the
// stored call replayed, and a tune whose lookup binds its stored algorithm.
#include <array>
#include <catch2/catch.hpp>
#include <set>

#include "db/database.hpp"
#include "generator/gemm_operator.hpp"
#include "generator/instance.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/hip/hip_backend.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/libraries/library_kernel.hpp"
#include "runtime/libraries/library_policy.hpp"
#include "runtime/lookup/lookup.hpp"
#include "templates/builtin_templates.hpp"
#include "tests/runtime/fake_gpu_driver.hpp"
#include "tests/test_util.hpp"
#include "tuner/measure/validator.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

/// What differs between the two libraries as a test sees it.
struct CublasLtFake {
  static constexpr const char* kTemplate = "gemm_cublaslt";
  static constexpr const char* kTarget = "cuda";
  static constexpr const char* kEnv = "KFORGE_CUBLASLT_LIBRARY";
  static constexpr const char* kLibrary = KFORGE_FAKE_CUBLASLT;
  static constexpr bool kEpilogue = true;  ///< binds bias and relu
  static Result<std::unique_ptr<Device>> open() { return open_cuda_device(test::fake_cuda_driver(), 0); }
};

struct HipblasLtFake {
  static constexpr const char* kTemplate = "gemm_hipblaslt";
  static constexpr const char* kTarget = "hip";
  static constexpr const char* kEnv = "KFORGE_HIPBLASLT_LIBRARY";
  static constexpr const char* kLibrary = KFORGE_FAKE_HIPBLASLT;
  static constexpr bool kEpilogue = false;
  static Result<std::unique_ptr<Device>> open() { return open_hip_device(test::fake_hip_runtime(), 0); }
};

/// A fake device, the builtin catalog with the library found at the fake,
/// and the library template.
template <class Lib>
struct Bench {
  test::ScopedEnv library{Lib::kEnv, Lib::kLibrary};
  std::unique_ptr<Device> device;
  TemplateCatalog catalog;
  const TemplateSource* tpl = nullptr;
  GemmOperator op;

  Bench() : catalog(open_catalog()) {
    test::FakeGpu::get().reset();
    auto d = Lib::open();
    REQUIRE(d.ok());
    device = std::move(d).value();
    tpl = catalog.find(Lib::kTemplate);
    REQUIRE(tpl);
    INFO(tpl->library_unavailable);
    REQUIRE(tpl->library_unavailable.empty());
  }

  static TemplateCatalog open_catalog() {
    auto c = TemplateCatalog::builtin();
    REQUIRE(c.ok());
    return std::move(*c);
  }

  Problem problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, Dtype dtype,
                  const char* layout, Epilogue epilogue = {}) const {
    Problem p;
    p.op = "gemm";
    p.dims = {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}};
    p.dtype = dtype;
    p.layout = *parse_layout(layout);
    p.epilogue = epilogue;
    auto normalized = op.normalize(p);
    REQUIRE(normalized.ok());
    return *normalized;
  }

  Result<Instance> instance(const Problem& p, const Config& c) const {
    return instantiate(*tpl, prelude_text(Lib::kTarget), op, c, p, device->info().limits());
  }

  /// The library call of ALGO `algo` for `p`, bound afresh or from `stored`.
  Result<std::unique_ptr<Kernel>> bind(const Problem& p, int algo, const nlohmann::json& stored = nullptr) {
    const Config c = *Config::parse("ALGO" + std::to_string(algo));
    KF_TRY_ASSIGN(inst, instance(p, c));
    return bind_library_call(*device, *tpl, inst, p, c, stored);
  }

  /// ALGO 0 of plain `p` bound for `p` with `epilogue`, past the manifest's envelope.
  Result<std::unique_ptr<Kernel>> bind_epilogue(const Problem& p, const Epilogue& epilogue) {
    const Config c = *Config::parse("ALGO0");
    KF_TRY_ASSIGN(inst, instance(p, c));
    Problem with = p;
    with.epilogue = epilogue;
    return bind_library_call(*device, *tpl, inst, with, c);
  }
};

/// Both validation runs of `kernel` (fresh output, then C accumulated with
/// beta) against the operator's reference; "" where both pass.
template <class Lib>
std::string validate(Bench<Lib>& b, Kernel& kernel, const Problem& p) {
  auto inst = b.instance(p, *Config::parse("ALGO16"));
  if (!inst.ok()) return inst.error().message;
  for (auto kind : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
    Workload w = b.op.make_workload(p, 11, kind);
    const Reference ref = b.op.reference(p, w);
    std::vector<std::unique_ptr<Buffer>> bufs;
    for (const auto& t : w.tensors) {
      auto buf = b.device->allocate(std::max<std::size_t>(t.bytes.size(), 4));
      if (!buf.ok()) return buf.error().message;
      if (auto s = b.device->write(**buf, t.bytes.data(), t.bytes.size()); !s.ok()) return s.error().message;
      bufs.push_back(std::move(*buf));
    }
    std::vector<KernelArg> args;
    for (const auto& a : w.args) {
      if (a.kind == OperatorArg::Kind::kTensor)
        args.push_back(KernelArg::of(*bufs[a.tensor]));
      else if (a.kind == OperatorArg::Kind::kInt32)
        args.push_back(KernelArg::of(a.i32));
      else
        args.push_back(KernelArg::of(a.f32));
    }
    auto ms = b.device->launch(kernel, args, inst->geometry);
    if (!ms.ok()) return "launch: " + ms.error().message;
    std::vector<float> out(w.tensors[w.output].elements());
    if (auto s = b.device->read(*bufs[w.output], out.data(), out.size() * sizeof(float)); !s.ok())
      return s.error().message;
    ValidationResult v = validate_output(out.data(), out.size(), ref);
    if (!v.passed) return b.op.run_name(kind) + ": " + v.describe();
  }
  return "";
}

nlohmann::json identity_of(const Kernel& k) {
  return dynamic_cast<const LibraryKernel&>(k).call_identity();
}

}  // namespace

TEMPLATE_TEST_CASE("a BLASLt gemm over the fake library matches the reference in every layout and dtype",
                   "[cublaslt][hipblaslt][unit]", CublasLtFake, HipblasLtFake) {
  Bench<TestType> b;
  for (Dtype dtype : {Dtype::kF32, Dtype::kF16, Dtype::kBF16})
    for (const char* layout : {"NN", "NT", "TN", "TT"})
      for (const auto& [m, n, k, batch] : std::vector<std::array<int, 4>>{{5, 3, 4, 1}, {17, 9, 13, 2}})
        for (int algo : {0, 2, 16}) {
          const Problem p = b.problem(m, n, k, batch, dtype, layout);
          INFO(p.key() << " ALGO" << algo);
          auto kernel = b.bind(p, algo);
          REQUIRE(kernel.ok());
          CHECK(validate(b, **kernel, p) == "");
        }
}

TEMPLATE_TEST_CASE("a BLASLt gemm takes the heuristic's k-th algorithm with the workspace it needs",
                   "[cublaslt][hipblaslt][unit]", CublasLtFake, HipblasLtFake) {
  Bench<TestType> b;
  const Problem p = b.problem(8, 6, 4, 1, Dtype::kF32, "NN");
  // The fake's heuristic offers three algorithms needing 0, 4096 and 1 MiB.
  const std::size_t workspace[] = {0, 4096, std::size_t{1} << 20};
  std::set<std::string> algos;
  for (int algo = 0; algo < 3; ++algo) {
    auto kernel = b.bind(p, algo);
    REQUIRE(kernel.ok());
    const nlohmann::json id = identity_of(**kernel);
    INFO(id.dump());
    CHECK(id["algo_index"] == algo);
    CHECK(id["workspace_bytes"] == workspace[algo]);
    CHECK_FALSE(id.contains("replayed"));
    algos.insert(id["algo"].dump());
  }
  CHECK(algos.size() == 3);
  auto past = b.bind(p, 3);
  REQUIRE_FALSE(past.ok());
  CHECK(past.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(past.error().message,
             Catch::Contains("the heuristic offers 3 algorithms") && Catch::Contains("ALGO 3 is past them"));
  auto deflt = b.bind(p, 16);
  REQUIRE(deflt.ok());
  CHECK(identity_of(**deflt)["algo"] == "default");
  CHECK(identity_of(**deflt)["workspace_bytes"] == std::size_t{32} << 20);
}

TEMPLATE_TEST_CASE("a BLASLt gemm's stored call binds the same algorithm again and computes",
                   "[cublaslt][hipblaslt][unit]", CublasLtFake, HipblasLtFake) {
  Bench<TestType> b;
  const Problem p = b.problem(12, 7, 5, 2, Dtype::kBF16, "TN");
  auto first = b.bind(p, 2);
  REQUIRE(first.ok());
  const nlohmann::json stored = identity_of(**first);
  INFO(stored.dump());
  // Replayed, not asked of the heuristic: ALGO 0 with ALGO 2's stored call binds ALGO 2's algorithm.
  auto again = b.bind(p, 0, stored);
  REQUIRE(again.ok());
  const nlohmann::json replayed = identity_of(**again);
  CHECK(replayed.value("replayed", false));
  CHECK(replayed["algo"] == stored["algo"]);
  CHECK(replayed["workspace_bytes"] == stored["workspace_bytes"]);
  CHECK(validate(b, **again, p) == "");
}

TEST_CASE("a stored cuBLASLt algorithm its check refuses falls back to the heuristic, saying why",
          "[cublaslt][unit]") {
  Bench<CublasLtFake> b;
  const Problem p = b.problem(12, 7, 5, 1, Dtype::kF16, "NT");
  auto first = b.bind(p, 1);
  REQUIRE(first.ok());
  nlohmann::json stored = identity_of(**first);
  REQUIRE(stored["algo"].is_object());
  stored["algo"]["tile"] = 99;  // a configuration the library does not have
  auto again = b.bind(p, 0, stored);
  REQUIRE(again.ok());
  const nlohmann::json id = identity_of(**again);
  INFO(id.dump());
  CHECK_FALSE(id.contains("replayed"));
  CHECK_THAT(id.value("replay_refused", ""), Catch::Contains("cublasLtMatmulAlgoCheck") &&
                                                 Catch::Contains("CUBLAS_STATUS_NOT_SUPPORTED (15)"));
  CHECK(id["workspace_bytes"] == 0);  // the heuristic's ALGO 0
  CHECK(validate(b, **again, p) == "");
}

TEST_CASE("cuBLASLt computes bias and relu as its epilogue over the fake library", "[cublaslt][unit]") {
  Bench<CublasLtFake> b;
  for (const char* epilogue : {"bias", "relu", "bias+relu"})
    for (const char* layout : {"NN", "TT"}) {
      const Problem p = b.problem(9, 11, 6, 2, Dtype::kF32, layout, *parse_epilogue(epilogue));
      INFO(p.key());
      auto kernel = b.bind(p, 1);
      REQUIRE(kernel.ok());
      CHECK(validate(b, **kernel, p) == "");
    }
  // The envelope leaves gelu to the kernels; the binding refuses it too.
  auto gelu = b.bind_epilogue(b.problem(9, 11, 6, 1, Dtype::kF32, "NN"), *parse_epilogue("gelu"));
  REQUIRE_FALSE(gelu.ok());
  CHECK(gelu.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(gelu.error().message, Catch::Contains("no epilogue computes gelu"));
}

TEST_CASE("hipBLASLt binds no epilogue", "[hipblaslt][unit]") {
  Bench<HipblasLtFake> b;
  // The envelope leaves epilogues to the kernels; the binding refuses them too.
  auto bias = b.bind_epilogue(b.problem(9, 11, 6, 1, Dtype::kF32, "NN"), *parse_epilogue("bias"));
  REQUIRE_FALSE(bias.ok());
  CHECK(bias.error().code == ErrorCode::kUnsupported);
  CHECK_THAT(bias.error().message, Catch::Contains("no epilogue"));
}

TEMPLATE_TEST_CASE("a BLASLt gemm tuned on the fake device is selected and binds its stored algorithm",
                   "[cublaslt][hipblaslt][unit]", CublasLtFake, HipblasLtFake) {
  Bench<TestType> b;
  test::TempDir dir;
  const std::string db_path = dir.file("lt.db");
  const Problem p = b.problem(16, 8, 8, 1, Dtype::kF16, "NN");
  {
    auto db = Database::open(db_path, Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    TuneRequest req;
    req.problem = p;
    req.templates = {b.tpl};
    req.only_config = "ALGO2";  // the fake's timings tie: one algorithm, so that one is stored
    req.protocol.warmup = 0;
    req.protocol.min_reps = req.protocol.max_reps = 2;
    Tuner tuner(*b.device, **db, b.op);
    auto run = tuner.run(req);
    INFO((run.ok() ? "" : run.error().message));
    REQUIRE(run.ok());
    REQUIRE(run->winner.has_value());
  }
  auto lookup = Lookup::open(db_path, *b.device, b.catalog);
  REQUIRE(lookup.ok());
  REQUIRE((*lookup)->set_library_policy("gemm", LibraryPolicy::kForce).ok());
  auto sel = (*lookup)->select(p);
  REQUIRE(sel.ok());
  INFO(sel->explanation);
  CHECK(sel->template_name == TestType::kTemplate);
  REQUIRE_FALSE(sel->library_call.empty());
  auto prepared = (*lookup)->prepare(*sel);
  REQUIRE(prepared.ok());
  const nlohmann::json identity = identity_of(*(*prepared)->kernel);
  INFO(identity.dump());
  const nlohmann::json stored = nlohmann::json::parse(sel->library_call);
  CHECK(stored["algo_index"] == 2);
  CHECK(identity.value("replayed", false));
  CHECK(identity["algo"] == stored["algo"]);
  CHECK(identity["workspace_bytes"] == std::size_t{1} << 20);
}
