// The counter collectors' pieces that need no device: the CPU PMU probe
// (this machine has none: the reason is recorded), Nsight Compute's raw CSV
// against the fixtures in tests/data/ncu (written to ncu's documented
// format, not recorded: tests/data/ncu/README.md), and collections as rows.
#include "runtime/profiling/counter_collection.hpp"

#include <catch2/catch.hpp>

#include "runtime/profiling/ncu_csv.hpp"
#include "runtime/profiling/perf_counters.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

namespace {

std::string fixture(const std::string& name) {
  return test::read_file(KFORGE_SOURCE_DIR "/tests/data/ncu/" + name);
}

const CounterReading* find(const NcuKernelRow& row, const std::string& name) {
  for (const auto& r : row.readings) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the perf probe either counts or says why not, naming perf_event_open's errno",
          "[counters][perf]") {
  const std::string why = PerfCounters::unavailable_reason();
  if (why.empty()) {
    // A host with a CPU PMU: a launch between start and stop is counted.
    auto c = collect_perf([] { return ok_status(); });
    REQUIRE(c.available());
    REQUIRE(c.readings.size() == 6);
    CHECK(c.readings[0].name == "cycles");
    return;
  }
  INFO(why);
  CHECK(why.find("(perf_event_open: ") != std::string::npos);
  CHECK((why.rfind("no CPU PMU (", 0) == 0 || why.rfind("not permitted (", 0) == 0 ||
         why.rfind("cannot count (", 0) == 0));
  const CounterCollection c = collect_perf([] { return ok_status(); });
  CHECK_FALSE(c.available());
  CHECK(c.unavailable == "unavailable: " + why);
  const auto rows = counter_rows(c, 7);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].source == "unavailable");
  CHECK(rows[0].collector == "perf");
  CHECK(rows[0].name == "availability");
  CHECK(rows[0].note == c.unavailable);
  CHECK(rows[0].result_id == 7);
}

TEST_CASE("ncu's raw CSV page is read with base units and without separators", "[counters][ncu]") {
  auto rows = parse_ncu_raw_csv(fixture("gemm_bf16_mma_sync_raw.csv"), "gemm_bf16_mma_sync_raw.csv");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  const NcuKernelRow& k = rows->front();
  CHECK(k.id == "0");
  CHECK(k.kernel_name == "gemm_mma_sync__BK32_BM128_BN128_STAGES3_WM64_WN64");
  CHECK(k.readings.size() == 23);
  REQUIRE(find(k, "dram__bytes_read.sum"));
  CHECK(find(k, "dram__bytes_read.sum")->value == 184549376.0);
  CHECK(find(k, "dram__bytes_read.sum")->unit == "byte");
  CHECK(find(k, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")->value ==
        Approx(71.43));
  CHECK(find(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")->value == 1245184.0);
  CHECK(find(k, "smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio")->value == Approx(4.96));
  CHECK(find(k, "Block Size") == nullptr);  // descriptive columns are not counters
}

TEST_CASE("ncu's prefixed units become base units, n/a is left out", "[counters][ncu]") {
  const std::string csv =
      "\"ID\",\"Kernel "
      "Name\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"lts__t_sector_hit_rate.pct\"\n"
      "\"\",\"\",\"Mbyte\",\"usecond\",\"%\"\n"
      "\"3\",\"k(float*, int)\",\"1,024.50\",\"12.5\",\"n/a\"\n";
  auto rows = parse_ncu_raw_csv(csv, "log.csv");
  REQUIRE(rows.ok());
  REQUIRE(rows->front().readings.size() == 2);
  CHECK(rows->front().kernel_name == "k(float*, int)");
  CHECK(rows->front().readings[0].value == Approx(1024.5e6));
  CHECK(rows->front().readings[0].unit == "byte");
  CHECK(rows->front().readings[1].value == Approx(12500));
  CHECK(rows->front().readings[1].unit == "nsecond");
}

TEST_CASE("bad ncu output is an error naming the file, line and column", "[counters][ncu]") {
  auto none = parse_ncu_raw_csv(
      "==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM - no permission\n", "a.csv");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message ==
        "a.csv: no ncu CSV header (a line starting \"ID\",) found; ncu said: ==ERROR== ERR_NVGPUCTRPERM - no "
        "permission");
  auto details = parse_ncu_raw_csv("\"ID\",\"Metric Name\",\"Metric Value\"\n\"\",\"\",\"\"\n", "b.csv");
  REQUIRE_FALSE(details.ok());
  CHECK(details.error().message.find("b.csv: line 1: the header has no \"Kernel Name\" column") == 0);
  auto garbled = parse_ncu_raw_csv(
      "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n\"\",\"\",\"byte\"\n\"0\",\"k\",\"lots\"\n", "c.csv");
  REQUIRE_FALSE(garbled.ok());
  CHECK(garbled.error().message == "c.csv: line 3: dram__bytes_read.sum: 'lots' is not a number");
  auto short_row = parse_ncu_raw_csv("\"ID\",\"Kernel Name\"\n\"\",\"\"\n\"0\"\n", "d.csv");
  REQUIRE_FALSE(short_row.ok());
  CHECK(short_row.error().message == "d.csv: line 3: 1 fields, the header has 2");
}

TEST_CASE("CSV records keep quoted commas and doubled quotes", "[counters][ncu]") {
  const auto f = split_csv_record(R"("a, b","say ""hi""",,3)");
  REQUIRE(f.size() == 4);
  CHECK(f[0] == "a, b");
  CHECK(f[1] == "say \"hi\"");
  CHECK(f[2].empty());
  CHECK(f[3] == "3");
}

TEST_CASE("a collection survives its JSON round trip", "[counters]") {
  CounterCollection c{"ncu", "ncu 2025.1.1.0", {}, {{"dram__bytes_read.sum", 5, "byte"}}};
  const CounterCollection back = collection_from_json(to_json(c), "ncu");
  CHECK(back.tool == "ncu 2025.1.1.0");
  REQUIRE(back.readings.size() == 1);
  CHECK(back.readings[0].value == 5);
  CHECK_FALSE(collection_from_json(nlohmann::json::object(), "perf").available());
}
