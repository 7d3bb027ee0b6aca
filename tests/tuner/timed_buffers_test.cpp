// The first launch on a buffer pays one-off costs (on PoCL most likely
// moving it to the device), which must never land in a timed sample: on
// PoCL a process's first timed launch read 1.46x its candidate's median in
// one run when it was the first launch on the timed run's buffers. So every timed launch (one
// right after a cache flush) uses buffers some earlier launch used.
#include <catch2/catch.hpp>

#include <set>

#include "db/database.hpp"
#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "tests/forwarding_device.hpp"
#include "tests/test_util.hpp"
#include "tests/tuner/small_gemm_request.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

/// A real device that logs each launch's buffers and each flush.
class LaunchLog final : public test::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  struct Event {
    bool flush = false;
    std::set<const Buffer*> buffers;
  };
  std::vector<Event> events;
  Result<double> launch(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    Event e;
    for (const auto& a : args) {
      if (a.kind == KernelArg::Kind::kBuffer) e.buffers.insert(a.buffer);
    }
    events.push_back(std::move(e));
    return inner_.launch(k, args, g, on_running);
  }
  Status flush_cache() override {
    events.push_back({true, {}});
    return inner_.flush_cache();
  }
};

}  // namespace

TEST_CASE("no timed launch is the first launch on its buffers", "[tuner][opencl]") {
  test::TempDir dir;
  auto pocl = open_device("opencl:0");
  REQUIRE(pocl.ok());
  LaunchLog device(**pocl);
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(device, **db, gemm);
  TuneRequest req = test::small_gemm_request(catalog->find("gemm_simt_tiled"), 32, 3);
  req.protocol.min_reps = 2;
  req.protocol.max_reps = 2;
  const bool fastest_first = GENERATE(true, false);
  req.fastest_first = fastest_first;
  INFO("fastest first: " << fastest_first);
  auto summary = tuner.run(req, {});
  REQUIRE(summary.ok());
  std::set<const Buffer*> used;
  int timed = 0;
  for (std::size_t i = 0; i < device.events.size(); ++i) {
    const auto& e = device.events[i];
    if (e.flush) continue;
    if (i > 0 && device.events[i - 1].flush) {
      ++timed;
      for (const Buffer* b : e.buffers) {
        INFO("launch " << i << " of " << device.events.size());
        CHECK(used.count(b) == 1);
      }
    }
    used.insert(e.buffers.begin(), e.buffers.end());
  }
  CHECK(timed >= 3);
}
