// A tuning run whose clocks come from a (fake) NVML reporting throttling:
// every stored result keeps all its samples, its clock record counts the
// throttled ones and its reason says so, search and finalists alike. The
// kernels run on PoCL; the device is PoCL with the NVML reader swapped in.
#include <catch2/catch.hpp>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/profiling/nvml_api.hpp"
#include "tests/forwarding_device.hpp"
#include "tests/test_util.hpp"
#include "tests/tuner/small_gemm_request.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

/// A real device whose clocks are read by another reader.
class WithClockReader final : public test::ForwardingDevice {
 public:
  WithClockReader(Device& inner, ClockReader& clocks) : ForwardingDevice(inner), clocks_(clocks) {}
  ClockReader* clock_reader() override { return &clocks_; }

 private:
  ClockReader& clocks_;
};

}  // namespace

TEST_CASE("throttled samples are kept, counted and noted in every stored result", "[tuner][clocks][opencl]") {
  test::TempDir dir;
  // SW thermal slowdown on every reading (the last line repeats).
  const test::ScopedScriptFile script(
      "KFORGE_FAKE_NVML_SCRIPT", "device GPU-0c1d2e3f 00000000:17:00.0\nsample 1410 2619 87 690000 20\n");
  auto nvml = nvml::open_nvml_clock_reader("GPU-0c1d2e3f", KFORGE_FAKE_NVML);
  REQUIRE(nvml.ok());
  auto pocl = open_device("opencl:0");
  REQUIRE(pocl.ok());
  WithClockReader device(**pocl, **nvml);
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(device, **db, gemm);

  TuneRequest req = test::small_gemm_request(catalog->find("gemm_simt_tiled"), 32, 4);
  req.protocol.warmup = 1;
  req.protocol.min_reps = 4;
  req.protocol.max_reps = 4;
  req.protocol.cut_ratio = 0;  // every search result has all 4 samples
  req.protocol.finalists = 2;
  req.protocol.finalist_window = 0;  // exactly two, however close the others are
  req.protocol.finalist_rounds = 5;
  auto summary = tuner.run(req, [](const TuneEvent&) {});
  REQUIRE(summary.ok());
  REQUIRE(summary->finalists.size() == 2);
  for (const auto& f : summary->finalists) CHECK(f.interleaved.clocks.throttled_count() == 5);

  int finalists = 0, ok = 0;
  const std::vector<ResultRecord> results = (*db)->results().value();
  for (const auto& r : results) {
    if (r.status != "ok") continue;
    ++ok;
    INFO(r.config << ": " << r.reason << "\n" << r.resources_json);
    const auto clocks = nlohmann::json::parse(r.resources_json).at("clocks");
    CHECK(clocks["source"] == "nvml");
    CHECK(clocks["core_mhz"].size() == static_cast<std::size_t>(r.count));  // every sample kept and read
    CHECK(clocks["summary"]["throttled_samples"] == r.count);
    CHECK(clocks["summary"]["reasons"] == nlohmann::json::array({"sw_thermal_slowdown"}));
    CHECK(clocks["summary"]["temperature_c_max"] == 87.0);
    const std::string note = std::to_string(r.count) + " of " + std::to_string(r.count) +
                             " samples throttled (sw_thermal_slowdown); the median includes them";
    CHECK(r.reason.find(note) != std::string::npos);
    if (r.reason.rfind("finalist re-timed", 0) == 0) {
      ++finalists;
      CHECK(r.count == 5);
    } else {
      CHECK(r.count == 4);
    }
  }
  CHECK(ok == 4);
  CHECK(finalists == 2);
}
