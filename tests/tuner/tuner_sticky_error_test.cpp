// A launch that fails with a sticky device error (the CUDA and HIP contexts
// are lost: an illegal address, say) makes its candidate a crash whose reason
// names the configuration and says why; the run goes on. The kernels run on
// PoCL; one configuration's launches fail as a GPU's would.
#include <catch2/catch.hpp>

#include "database.hpp"
#include "device_registry.hpp"
#include "gemm_operator.hpp"
#include "sticky_error.hpp"
#include "template_catalog.hpp"
#include "test_util.hpp"
#include "tuner.hpp"

using namespace kforge;

namespace {

/// A real device on which every launch of kernels named with `marker` fails
/// with a sticky device error.
class StickyOnMarker final : public Device {
 public:
  StickyOnMarker(Device& inner, std::string marker) : inner_(inner), marker_(std::move(marker)) {}
  const DeviceInfo& info() const override { return inner_.info(); }
  Compiler& compiler() override { return inner_.compiler(); }
  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& c) override { return inner_.load(c); }
  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  Status write(Buffer& dst, const void* src, std::size_t n) override { return inner_.write(dst, src, n); }
  Status read(const Buffer& src, void* dst, std::size_t n) override { return inner_.read(src, dst, n); }
  Result<double> launch(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g) override {
    if (k.name().find(marker_) != std::string::npos) {
      return sticky_device_error(k.name() + " failed while running: CUDA_ERROR_ILLEGAL_ADDRESS",
                                 "an illegal memory access was encountered");
    }
    return inner_.launch(k, args, g);
  }
  Status flush_cache() override { return inner_.flush_cache(); }
  ClockReader* clock_reader() override { return inner_.clock_reader(); }

 private:
  Device& inner_;
  std::string marker_;
};

}  // namespace

TEST_CASE("a sticky device error at launch makes the candidate a crash that names it and says why",
          "[tuner][opencl]") {
  test::TempDir dir;
  auto pocl = open_device("opencl:0");
  REQUIRE(pocl.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;

  TuneRequest req;
  req.problem.op = "gemm";
  req.problem.dims = {{"M", 32}, {"N", 32}, {"K", 32}, {"batch", 1}};
  req.problem.dtype = Dtype::kF32;
  req.problem.layout = *parse_layout("NN");
  req.templates = {catalog->find("gemm_simt_tiled")};
  req.max_evals = 3;
  req.protocol.min_reps = 2;
  req.protocol.max_reps = 2;

  // The first run finds which configurations the search picks; the second
  // makes the second of them fail.
  std::string victim;
  {
    Tuner tuner(**pocl, **db, gemm);
    REQUIRE(tuner.run(req, [](const TuneEvent&) {}).ok());
    const auto results = (*db)->results().value();
    REQUIRE(results.size() == 3);
    victim = results[1].config;
  }
  auto db2 = Database::open(dir.file("t2.db"), Database::Mode::kReadWrite);
  REQUIRE(db2.ok());
  StickyOnMarker device(**pocl, victim);
  Tuner tuner(device, **db2, gemm);
  auto summary = tuner.run(req, [](const TuneEvent&) {});
  REQUIRE(summary.ok());
  const auto results = (*db2)->results().value();
  REQUIRE(results.size() == 3);
  for (const auto& r : results) {
    INFO(r.config << ": " << r.status << ": " << r.reason);
    if (r.config == victim) {
      CHECK(r.status == "crash");
      CHECK_THAT(r.reason, Catch::Contains(victim) && Catch::Contains("CUDA_ERROR_ILLEGAL_ADDRESS") &&
                               Catch::Contains("sticky device error"));
    } else {
      CHECK(r.status == "ok");
    }
  }
  REQUIRE(summary->winner.has_value());
  CHECK(summary->winner->config != victim);
}
