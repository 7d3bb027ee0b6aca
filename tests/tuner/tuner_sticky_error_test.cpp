// A launch that fails with a sticky device error (the CUDA and HIP contexts
// are lost: an illegal address, say) makes its candidate a crash whose reason
// names the configuration and says why; the run goes on. The kernels run on
// PoCL; one configuration's launches fail as a GPU's would.
#include <catch2/catch.hpp>

#include "db/database.hpp"
#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/device/sticky_error.hpp"
#include "tests/forwarding_device.hpp"
#include "tests/test_util.hpp"
#include "tests/tuner/small_gemm_request.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

/// A real device on which every launch of kernels named with `marker` fails
/// with a sticky device error.
class StickyOnMarker final : public test::ForwardingDevice {
 public:
  StickyOnMarker(Device& inner, std::string marker) : ForwardingDevice(inner), marker_(std::move(marker)) {}
  Result<double> launch(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    if (k.name().find(marker_) != std::string::npos) {
      return sticky_device_error(k.name() + " failed while running: CUDA_ERROR_ILLEGAL_ADDRESS",
                                 "an illegal memory access was encountered");
    }
    return inner_.launch(k, args, g, on_running);
  }

 private:
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

  TuneRequest req = test::small_gemm_request(catalog->find("gemm_simt_tiled"), 32, 3);
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
