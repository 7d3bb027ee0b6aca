// What the lookup's exact rule rests on: the device key stays the same when
// the host's memory changes, and the winner slot never holds a tampered row.
#include "tests/forwarding_device.hpp"
#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

/// The same device, reporting another global memory size (PoCL reads a CPU
/// device's from the host's memory, which changes on the same machine).
class OtherMemoryDevice : public ForwardingDevice {
 public:
  OtherMemoryDevice(Device& inner, std::int64_t global_mem_bytes) : ForwardingDevice(inner), info_(inner.info()) {
    info_.global_mem_bytes = global_mem_bytes;
  }
  const DeviceInfo& info() const override { return info_; }

 private:
  DeviceInfo info_;
};

}  // namespace

TEST_CASE("a CPU device tuned at one memory size answers exact at another", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  if ((*device)->info().device_type != DeviceType::kCpu) {
    WARN("SKIPPED: needs a CPU OpenCL device (PoCL); this one is "
         << device_type_name((*device)->info().device_type));
    return;
  }
  const std::string db = tuned_copy(**device, dir);
  OtherMemoryDevice grown(**device, (*device)->info().global_mem_bytes * 4 + 4096);
  CHECK(grown.info().hardware_key() == (*device)->info().hardware_key());
  Warnings w;
  auto lookup = open_lookup(w.options(db), grown, catalog_with());
  const Selection s = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(s.rule == SelectionRule::kExact);
  CHECK(s.template_name == "gemm_naive_planted");
}

TEST_CASE("a retune takes the winner slot back from a tampered fastest row", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  // BX 12 is not declared: the tamperer's row is the fastest and holds the slot.
  exec_sql(db, "INSERT INTO results (sweep_id, device_id, template_id, problem_id, config, status, median_ms, "
               "count, created_at) SELECT sweep_id, device_id, template_id, problem_id, 'BX12_BY4_FLAW0', 'ok', "
               "1e-9, 1, created_at FROM results WHERE id = 1; "
               "UPDATE winners SET result_id = last_insert_rowid(), config = 'BX12_BY4_FLAW0', median_ms = 1e-9");
  tune_into(db, **device, catalog_with(), "gemm_naive_planted", gemm(33, 17, 9));  // every candidate stored
  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with());
  const Selection s = select_ok(*lookup, gemm(33, 17, 9));
  INFO(s.explanation);
  CHECK(s.rule == SelectionRule::kExact);
  CHECK(s.template_name == "gemm_naive_planted");
  CHECK(s.config != "BX12_BY4_FLAW0");
  CHECK_THAT(s.config, Catch::Contains("FLAW0"));
}

TEST_CASE("a winner whose result row is failing, missing or another is not served", "[lookup][opencl]") {
  // Issue 56: a winners row edited to name a failing configuration, or
  // pointed at a wrong_result row, was served without a warning.
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string failing = "(SELECT config FROM results WHERE status = 'wrong_result' ORDER BY id LIMIT 1)";
  const std::vector<std::pair<std::string, std::string>> tamperings = {
      {"UPDATE winners SET config = " + failing + ", result_id = (SELECT id FROM results WHERE status = "
       "'wrong_result' ORDER BY id LIMIT 1)", "has status wrong_result"},
      {"UPDATE winners SET config = " + failing, "is for configuration"},
      {"UPDATE winners SET result_id = 999999", "does not exist"},
  };
  for (std::size_t i = 0; i < tamperings.size(); ++i) {
    const auto& [sql, why] = tamperings[i];
    const std::string db = tuned_copy(**device, dir, "t" + std::to_string(i) + ".db");
    exec_sql(db, sql);
    Warnings w;
    auto lookup = open_lookup(w.options(db), **device, catalog_with());
    const Selection s = select_ok(*lookup, gemm(33, 17, 9));
    INFO(sql << "\n" << s.explanation);
    CHECK(s.rule == SelectionRule::kDefault);  // the only tuned entry disagrees: never served
    CHECK(s.template_name == "gemm_simt_tiled");
    CHECK(w.count(why) == 1);
    CHECK_THAT(s.explanation, Catch::Contains(why));
  }
}
