// On OpenCL the fastest finalist's binary is stored for the runtime, and
// handing out a PoCL binary costs about a build. A later run whose group
// program serves that candidate (rather than the stored binary) must find
// the entry there and not build and write it again. PoCL runs the kernels.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "tests/test_util.hpp"
#include "tuner/candidate_evaluator.hpp"

using namespace kforge;

TEST_CASE("a stored winner's binary is not written again when a group's program served it", "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  REQUIRE(catalog->add_dir(std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted").ok());
  const TemplateSource* tpl = catalog->find("gemm_naive_planted");
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
  protocol.finalist_rounds = 1;
  const std::string cache_dir = dir.file("cache");
  const std::vector<CandidateRef> group = {{tpl->manifest.name, "BX8_BY4_FLAW0", 0},
                                           {tpl->manifest.name, "BX16_BY4_FLAW0", 0}};
  auto entries = [&] {
    std::map<std::string, std::filesystem::file_time_type> written;
    if (!std::filesystem::exists(cache_dir)) return written;
    for (const auto& f : std::filesystem::recursive_directory_iterator(cache_dir)) {
      if (f.is_regular_file() && f.path().extension() == ".bin") written[f.path().string()] = f.last_write_time();
    }
    return written;
  };
  // One run: the group built as one program, both evaluated, the first re-timed alone and stored.
  auto run = [&](bool* first_from_cache) {
    auto cache = BinaryCache::open(cache_dir);
    REQUIRE(cache.ok());
    auto runner = CandidateEvaluator::create(**device, gemm, *problem, {tpl}, 11, protocol, std::move(*cache),
                                             CompilePipeline{.threads = 1, .combine = true});
    REQUIRE(runner.ok());
    auto built = (*runner)->precompile(group);
    REQUIRE(built.ok());
    CHECK(built->combined == 2);
    for (const auto& c : group) {
      auto e = (*runner)->evaluate(c.template_name, Config::parse(c.config).value(), 0.0);
      REQUIRE(e.ok());
      REQUIRE(e->status == CandidateStatus::kOk);
      if (c.config == group[0].config) *first_from_cache = e->cache_hit;
    }
    REQUIRE((*runner)->retime({group[0]}).ok());
  };
  bool from_cache = true;
  run(&from_cache);
  const auto stored = entries();
  REQUIRE(stored.size() == 1);
  run(&from_cache);
  CHECK_FALSE(from_cache);  // the group's program served it, not the stored binary
  CHECK(entries() == stored);
}
