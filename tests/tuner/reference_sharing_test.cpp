// The validation references a tuning run's processes share through the
// reference directory: a second runner reads what the first wrote and
// validates against it, and a corrupt file is computed again and replaced.
// PoCL runs the kernels.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "tests/test_util.hpp"
#include "tuner/candidate_evaluator.hpp"
#include "tuner/measure/reference_file.hpp"

using namespace kforge;

TEST_CASE("reference sharing: a later runner validates against the references the first wrote", "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* tpl = catalog->find("gemm_simt_tiled");
  REQUIRE(tpl);
  GemmOperator gemm;
  Problem raw;
  raw.op = "gemm";
  raw.dims = {{"M", 32}, {"N", 32}, {"K", 16}};
  auto problem = gemm.normalize(raw);
  REQUIRE(problem.ok());
  MeasurementProtocol protocol;
  protocol.min_reps = 1;
  protocol.max_reps = 1;
  constexpr std::uint64_t kSeed = 11;
  const std::string refs = dir.path().string();
  auto runner = [&] {
    auto r = CandidateEvaluator::create(**device, gemm, *problem, {tpl}, kSeed, protocol, std::nullopt,
                                        CompilePipeline{.threads = 1, .combine = true}, false, refs);
    REQUIRE(r.ok());
    return std::move(*r);
  };
  const Config cfg = tpl->manifest.default_config();
  const std::string poisoned = (dir.path() / "poisoned-output.ref").string();
  const auto poisoned_key = reference_key(*problem, kSeed, WorkloadKind::kPoisonedOutput);

  // The first computes both references and writes them.
  {
    auto first = runner();
    CHECK(first->references_loaded() == 0);
    auto e = first->evaluate(tpl->manifest.name, cfg, 0);
    REQUIRE(e.ok());
    CHECK(e->status == CandidateStatus::kOk);
  }
  REQUIRE(std::filesystem::exists(poisoned));
  REQUIRE(std::filesystem::exists(dir.path() / "accumulate.ref"));

  SECTION("the next one reads them, and validates against what it read") {
    {
      auto second = runner();
      CHECK(second->references_loaded() == 2);
      auto e = second->evaluate(tpl->manifest.name, cfg, 0);
      REQUIRE(e.ok());
      CHECK(e->status == CandidateStatus::kOk);
    }
    // A well-formed file with one value moved: a runner that read it
    // rejects the correct kernel, so what it validates against is the file.
    auto stored = load_reference(poisoned, poisoned_key);
    REQUIRE(stored.ok());
    stored->value[5] += 1.0;
    REQUIRE(save_reference(poisoned, poisoned_key, *stored).ok());
    auto third = runner();
    CHECK(third->references_loaded() == 2);
    auto e = third->evaluate(tpl->manifest.name, cfg, 0);
    REQUIRE(e.ok());
    CHECK(e->status == CandidateStatus::kWrongResult);
  }

  SECTION("a corrupt file is computed again and replaced") {
    std::filesystem::resize_file(poisoned, std::filesystem::file_size(poisoned) / 2);
    {
      auto second = runner();
      CHECK(second->references_loaded() == 1);
      auto e = second->evaluate(tpl->manifest.name, cfg, 0);
      REQUIRE(e.ok());
      CHECK(e->status == CandidateStatus::kOk);
    }
    CHECK(load_reference(poisoned, poisoned_key).ok());
    CHECK(runner()->references_loaded() == 2);
  }
}
