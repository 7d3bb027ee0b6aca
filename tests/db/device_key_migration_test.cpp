// Schema version 3: a CPU device's key no longer hashes its global memory
// (the host's current memory), and the device rows a version 2 database
// holds for one CPU at several memory sizes become one, results and winners
// kept.
#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "generator/hardware_identity.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

HardwareIdentity pocl_cpu(std::int64_t global_mem_bytes) {
  return {"opencl", "GenuineIntel", "cpu-haswell-Intel(R) Xeon(R) CPU", "x86_64-haswell", "cpu", 4,
          global_mem_bytes};
}

/// A device row as a version 2 kforge wrote it: the key hashed memory.
DeviceRecord v2_device(const HardwareIdentity& id) {
  nlohmann::json info = {{"backend", id.backend},         {"vendor", id.vendor},
                         {"name", id.name},               {"arch", id.arch},
                         {"device_type", id.device_type}, {"compute_units", id.compute_units},
                         {"global_mem_bytes", id.global_mem_bytes}, {"hardware_key", id.key_before_v3()}};
  return {0, id.key_before_v3(), id.backend, id.vendor, id.name, id.arch, info.dump()};
}

}  // namespace

TEST_CASE("a CPU's key does not change with its memory, a GPU's still tells memory apart", "[db][migrate]") {
  const HardwareIdentity small = pocl_cpu(5'100'000'000), large = pocl_cpu(23'100'000'000);
  CHECK(small.key() == large.key());
  CHECK(small.key_before_v3() != large.key_before_v3());
  HardwareIdentity gpu{"cuda", "NVIDIA", "NVIDIA H200", "sm_90", "gpu", 132, 150'000'000'000};
  HardwareIdentity other_gpu = gpu;
  other_gpu.global_mem_bytes /= 2;
  CHECK(gpu.key() != other_gpu.key());
  CHECK(gpu.key() == gpu.key_before_v3());  // GPU keys stay what they were
  HardwareIdentity more_units = small;
  more_units.compute_units += 1;
  CHECK(more_units.key() != small.key());
}

TEST_CASE("version 3 merges the device rows of one CPU seen at two memory sizes", "[db][migrate]") {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  const HardwareIdentity before = pocl_cpu(5'100'000'000), after = pocl_cpu(23'100'000'000);
  const DeviceRecord gpu = sample_device("gpu-key");  // a row whose key this kforge cannot reproduce
  {
    auto v2 = Database::open_at_version(path, 2).value();
    Ids a = seed(*v2);  // sample device "dev-a" with an info_json it cannot rekey either
    Ids small = a, large = a, g = a;
    small.device = v2->put_device(v2_device(before)).value();
    large.device = v2->put_device(v2_device(after)).value();
    g.device = v2->put_device(gpu).value();
    // BM32 measured under both keys (the rerun re-measured it), BM64 only after.
    REQUIRE(v2->add_result(make_result(small, "BM32", "ok", 2.0)).value());
    REQUIRE(v2->add_result(make_result(large, "BM32", "ok", 1.9)).value());
    REQUIRE(v2->add_result(make_result(large, "BM64", "ok", 1.0)).value());
    REQUIRE(v2->add_result(make_result(small, "BM128", "wrong_result", 0)).value());
    REQUIRE(v2->add_result(make_result(g, "BM32", "ok", 0.2)).value());
    SweepRecord s;
    s.device_json = v2_device(after).info_json;
    v2->begin_sweep(s).value();
    REQUIRE(v2->devices().value().size() == 4);
    REQUIRE(v2->winners().value().size() == 3);
  }

  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  REQUIRE(db->schema_version() == kSchemaVersion);  // through migration 3
  const auto devices = db->devices().value();
  REQUIRE(devices.size() == 3);
  CHECK(devices[0].key == "dev-a");
  CHECK(devices[1].key == before.key());
  CHECK(devices[2].key == "gpu-key");
  CHECK(nlohmann::json::parse(devices[1].info_json).at("hardware_key") == before.key());

  // The earliest result of BM32 is kept; the other configurations move over.
  std::map<std::string, double> cpu;
  const auto results = db->results({before.key(), {}, {}}).value();
  for (const auto& r : results) cpu[r.config] = r.median_ms;
  CHECK(cpu == std::map<std::string, double>{{"BM32", 2.0}, {"BM64", 1.0}, {"BM128", 0.0}});
  CHECK(db->results({gpu.key, {}, {}}).value().size() == 1);

  const auto winners = db->winners({before.key(), {}, {}, {}, {}}).value();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].config == "BM64");
  CHECK(db->winners().value().size() == 2);
  CHECK(nlohmann::json::parse(db->sweeps().value().back().device_json).at("hardware_key") == before.key());
  CHECK(db->verify().value().findings.empty());
}
