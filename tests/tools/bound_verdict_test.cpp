// The bound verdict (report/bound_verdict.hpp): one hand-built case per class,
// the model's fallback, and the two ncu fixtures (tests/data/ncu, written to
// ncu's documented format, not recorded) on their sides of the verdict.
#include "report/bound_verdict.hpp"

#include <catch2/catch.hpp>

#include "report/counter_summary.hpp"
#include "runtime/profiling/counter_collection.hpp"
#include "runtime/profiling/ncu_csv.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using namespace kforge::report;

namespace {

/// An H200-like device: 4800 GB/s, 989 TFLOP/s dense bf16.
BoundEvidence h200(double median_ms) {
  BoundEvidence e;
  e.median_ms = median_ms;
  e.bandwidth_gbs = 4800;
  e.peak_gflops = 989'000;
  return e;
}

/// The stored rows of a fixture's launch, as tune --profile stores them, with the model's counts.
std::vector<CounterRecord> fixture_rows(const std::string& name, double model_bytes, double model_flops) {
  auto parsed = parse_ncu_raw_csv(test::read_file(KFORGE_SOURCE_DIR "/tests/data/ncu/" + name), name);
  REQUIRE(parsed.ok());
  auto rows = counter_rows({"ncu", "ncu", {}, parsed->front().readings}, 1);
  for (auto& r : counter_rows({"model",
                               "kforge",
                               {},
                               {{"model_bytes", model_bytes, "byte"}, {"model_flops", model_flops, "flop"}}},
                              1)) {
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("a launch near the bandwidth ceiling is memory-bound, with its intensity", "[verdict]") {
  BoundEvidence e = h200(0.2);
  e.dram_bytes = 0.2e-3 * 4800e9 * 0.88;  // 0.88 of the ceiling
  e.model_flops = 1e8;
  e.fma_pipe = 0.05;
  const BoundVerdict v = classify_bound(e);
  CHECK(v.bound == Bound::kMemory);
  CHECK(v.first == Approx(0.88));
  CHECK(v.second == Approx(1e8 / *e.dram_bytes));
  CHECK_FALSE(v.from_model);
  CHECK(v.text.rfind("memory-bound at 0.88 of copy bandwidth, ", 0) == 0);
}

TEST_CASE("a busy tensor pipe is compute-bound, with the bandwidth beside it", "[verdict]") {
  BoundEvidence e = h200(0.4);
  e.dram_bytes = 0.4e-3 * 4800e9 * 0.11;
  e.tensor_pipe = 0.71;
  e.fma_pipe = 0.06;
  const BoundVerdict v = classify_bound(e);
  CHECK(v.bound == Bound::kCompute);
  CHECK(v.first == Approx(0.71));
  CHECK(v.second == Approx(0.11));
  CHECK(v.text == "compute-bound: 0.71 tensor pipe busy, 0.11 of copy bandwidth");
}

TEST_CASE("a launch reaching neither ceiling is latency/occupancy-bound", "[verdict]") {
  BoundEvidence e = h200(1.0);
  e.dram_bytes = 1e-3 * 4800e9 * 0.3;
  e.fma_pipe = 0.2;
  e.occupancy = 0.25;
  const BoundVerdict v = classify_bound(e);
  CHECK(v.bound == Bound::kLatency);
  CHECK(v.first == Approx(0.3));
  CHECK(v.second == Approx(0.2));
  CHECK(v.text == "latency/occupancy-bound: 0.30 of copy bandwidth, 0.20 FMA pipe busy (occupancy 0.25)");
}

TEST_CASE("a few microseconds that reach no ceiling are launch-bound", "[verdict]") {
  BoundEvidence e = h200(0.004);
  e.model_bytes = 1 << 20;
  e.model_flops = 1 << 18;
  const BoundVerdict v = classify_bound(e);
  CHECK(v.bound == Bound::kLaunch);
  CHECK(v.first == Approx(4.0));
  CHECK(v.from_model);
  CHECK(v.text.rfind("launch-bound: 4.00 us per launch (under 10.0 us), 0.05 of copy bandwidth", 0) == 0);
  CHECK(v.text.find("(from the model, not counters)") != std::string::npos);
}

TEST_CASE("without counters the verdict is the model's and says so", "[verdict]") {
  BoundEvidence e = h200(10.0);
  e.model_bytes = 1e6;
  e.model_flops = 2.0 * 8192 * 8192 * 8192;  // 1.1 PFLOP in 10 ms: 0.11 of peak
  BoundVerdict v = classify_bound(e);
  CHECK(v.bound == Bound::kLatency);
  CHECK(v.from_model);
  e.median_ms = 1.5;  // the same flops at 0.74 of peak
  v = classify_bound(e);
  CHECK(v.bound == Bound::kCompute);
  CHECK(v.first == Approx(2.0 * 8192 * 8192 * 8192 / 1.5e-3 / 989e12));
  CHECK(v.text.find("of peak FLOP/s") != std::string::npos);
  CHECK(v.text.find("(from the model, not counters)") != std::string::npos);
  BoundEvidence none;
  none.median_ms = 1;
  none.model_bytes = 1e9;
  v = classify_bound(none);
  CHECK(v.bound == Bound::kUnknown);
  CHECK(v.text.rfind("unknown: no ceilings known (1000 GB/s, 0.00 GFLOP/s achieved)", 0) == 0);
}

TEST_CASE("the ncu fixtures land on their sides of the verdict", "[verdict][ncu]") {
  DeviceCeilings h{"H200", "", 67'000, 989'000, 4'800, "datasheet"};
  const double n = 4096;
  const auto gemm = fixture_rows("gemm_bf16_mma_sync_raw.csv", 3 * n * n * 2, 2 * n * n * n);
  BoundVerdict v = verdict_for(0.4127, gemm, h, "bf16");
  CHECK(v.bound == Bound::kCompute);
  CHECK(v.first == Approx(0.7143));
  CHECK(v.first_name == "tensor pipe busy");
  CHECK(v.second == Approx((184549376.0 + 33554432.0) / 0.4127e-3 / 4800e9));
  CHECK_FALSE(v.from_model);

  const auto rms = fixture_rows("rmsnorm_f32_raw.csv", 2 * 8192.0 * 8192 * 4, 4 * 8192.0 * 8192);
  v = verdict_for(0.1789, rms, h, "f32");
  CHECK(v.bound == Bound::kMemory);
  CHECK(v.first == Approx((268501248.0 + 268435456.0) / 0.1789e-3 / 4800e9));
  // Without ceilings, ncu's own fraction of the DRAM peak decides.
  v = verdict_for(0.1789, rms, std::nullopt, "f32");
  CHECK(v.bound == Bound::kMemory);
  CHECK(v.first == Approx(0.8634));
  CHECK(v.first_name == "of DRAM peak (profiler)");

  const auto stalls = top_stalls(rms, 2);
  REQUIRE(stalls.size() == 2);
  CHECK(stalls[0].first == "long_scoreboard");
  CHECK(stalls[1].first == "lg_throttle");
  const std::string line = counters_line(gemm);
  CHECK(line.rfind("ncu: DRAM 218.1 MB, L2 hit % 82.1, L1 hit % 1.32, occupancy % 24.9, tensor pipe % 71.4",
                   0) == 0);
  CHECK(line.find("top stalls math_pipe_throttle 4.96 barrier 3.12 wait 2.31") != std::string::npos);
}
