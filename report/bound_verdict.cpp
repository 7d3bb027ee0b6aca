// classify_bound: the fractions of each ceiling a launch reached, then the
// rules of docs/profiling.md in order: launch, memory, compute, latency.
#include "report/bound_verdict.hpp"

#include <algorithm>
#include <cstdio>

namespace kforge::report {
namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

struct Fraction {
  std::optional<double> value;
  std::string name;  ///< "of copy bandwidth", "tensor pipe busy", ...
};

/// The memory side: measured (or model) bytes over the time against the
/// bandwidth ceiling, else the profiler's own DRAM fraction.
Fraction memory_fraction(const BoundEvidence& e, double seconds) {
  const double bytes = e.dram_bytes.value_or(e.model_bytes);
  if (e.bandwidth_gbs > 0 && bytes > 0 && seconds > 0) {
    return {bytes / seconds / (e.bandwidth_gbs * 1e9), "of " + e.bandwidth_name};
  }
  if (e.dram_peak) return {*e.dram_peak, "of DRAM peak (profiler)"};
  return {};
}

/// The compute side: the busiest pipe the profiler saw, else the flops over
/// the time against the peak ceiling, else the profiler's SM fraction.
Fraction compute_fraction(const BoundEvidence& e, double seconds) {
  if (e.tensor_pipe || e.fma_pipe) {
    const bool tensor = e.tensor_pipe && (!e.fma_pipe || *e.tensor_pipe >= *e.fma_pipe);
    return {tensor ? *e.tensor_pipe : *e.fma_pipe, tensor ? "tensor pipe busy" : "FMA pipe busy"};
  }
  if (e.peak_gflops > 0 && e.model_flops > 0 && seconds > 0) {
    return {e.model_flops / seconds / (e.peak_gflops * 1e9), "of " + e.flops_name};
  }
  if (e.sm_peak) return {*e.sm_peak, "of SM peak (profiler)"};
  return {};
}

BoundVerdict verdict(Bound b, double first, std::string first_name, double second, std::string second_name) {
  BoundVerdict v;
  v.bound = b;
  v.first = first;
  v.second = second;
  v.first_name = std::move(first_name);
  v.second_name = std::move(second_name);
  return v;
}

}  // namespace

std::string_view bound_name(Bound b) {
  switch (b) {
    case Bound::kMemory:
      return "memory-bound";
    case Bound::kCompute:
      return "compute-bound";
    case Bound::kLatency:
      return "latency/occupancy-bound";
    case Bound::kLaunch:
      return "launch-bound";
    case Bound::kUnknown:
      break;
  }
  return "unknown";
}

BoundVerdict classify_bound(const BoundEvidence& e) {
  const double seconds = e.median_ms * 1e-3;
  const Fraction mem = memory_fraction(e, seconds), comp = compute_fraction(e, seconds);
  const double m = mem.value.value_or(0), c = comp.value.value_or(0);
  const double bytes = e.dram_bytes.value_or(e.model_bytes);
  BoundVerdict v;
  if (e.median_ms > 0 && e.median_ms * 1e3 < kLaunchBoundUs && m < kBoundFraction && c < kBoundFraction) {
    v = verdict(Bound::kLaunch, e.median_ms * 1e3, "us per launch", m,
                mem.value ? mem.name : "of bandwidth (unknown)");
    v.text = "launch-bound: " + number(v.first) + " us per launch (under " + number(kLaunchBoundUs) +
             " us), " + (mem.value ? number(m) + " " + mem.name : "no bandwidth ceiling known");
  } else if (!mem.value && !comp.value) {
    const double gbs = seconds > 0 ? bytes / seconds / 1e9 : 0,
                 gflops = seconds > 0 ? e.model_flops / seconds / 1e9 : 0;
    v = verdict(Bound::kUnknown, gbs, "GB/s", gflops, "GFLOP/s");
    v.text = "unknown: no ceilings known (" + number(gbs) + " GB/s, " + number(gflops) + " GFLOP/s achieved)";
  } else if (m >= kBoundFraction && m >= c) {
    v = verdict(Bound::kMemory, m, mem.name, bytes > 0 ? e.model_flops / bytes : 0, "flop/byte");
    v.text = "memory-bound at " + number(m) + " " + mem.name + ", " + number(v.second) + " flop/byte";
  } else if (c >= kBoundFraction) {
    v = verdict(Bound::kCompute, c, comp.name, m, mem.value ? mem.name : "of bandwidth (unknown)");
    v.text = "compute-bound: " + number(c) + " " + comp.name + ", " +
             (mem.value ? number(m) + " " + mem.name : "bandwidth unknown");
  } else {
    v = verdict(Bound::kLatency, m, mem.value ? mem.name : "of bandwidth (unknown)", c,
                comp.value ? comp.name : "of compute (unknown)");
    v.text = "latency/occupancy-bound: " + (mem.value ? number(m) + " " + mem.name : "bandwidth unknown") +
             ", " + (comp.value ? number(c) + " " + comp.name : "compute unknown");
    if (e.occupancy) v.text += " (occupancy " + number(*e.occupancy) + ")";
  }
  v.from_model = !e.dram_bytes && !e.tensor_pipe && !e.fma_pipe && !e.dram_peak && !e.sm_peak;
  if (v.from_model) v.text += " (from the model, not counters)";
  return v;
}

nlohmann::json BoundVerdict::to_json() const {
  nlohmann::json evidence = nlohmann::json::array();
  evidence.push_back({{"value", first}, {"what", first_name}});
  evidence.push_back({{"value", second}, {"what", second_name}});
  return {{"bound", bound_name(bound)}, {"evidence", evidence}, {"from_model", from_model}, {"text", text}};
}

BoundEvidence evidence_from_counters(const std::vector<CounterRecord>& rows, double median_ms) {
  BoundEvidence e;
  e.median_ms = median_ms;
  double read = 0, written = 0;
  bool dram = false;
  for (const CounterRecord& r : rows) {
    if (!r.value || r.source == "unavailable") continue;
    const double v = *r.value;
    const auto pct = [&](std::optional<double>& field) { field = v / 100.0; };
    if (r.name == "model_bytes")
      e.model_bytes = v;
    else if (r.name == "model_flops")
      e.model_flops = v;
    else if (r.name == "dram__bytes_read.sum")
      read = v, dram = true;
    else if (r.name == "dram__bytes_write.sum")
      written = v, dram = true;
    else if (r.name == "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active")
      pct(e.tensor_pipe);
    else if (r.name == "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active")
      pct(e.fma_pipe);
    else if (r.name == "sm__warps_active.avg.pct_of_peak_sustained_active")
      pct(e.occupancy);
    else if (r.name == "dram__throughput.avg.pct_of_peak_sustained_elapsed")
      pct(e.dram_peak);
    else if (r.name == "sm__throughput.avg.pct_of_peak_sustained_elapsed")
      pct(e.sm_peak);
  }
  if (dram) e.dram_bytes = read + written;
  return e;
}

}  // namespace kforge::report
