// counters_json, counters_line, top_stalls, verdict_for.
#include "report/counter_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "report/tuning_facts.hpp"

namespace kforge::report {
namespace {

constexpr const char* kStallPrefix = "smsp__average_warp_latency_issue_stalled_";

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 1000 ? "%.0f" : v >= 100 ? "%.1f" : "%.3g", v);
  return buf;
}

/// The rows of each collector, in first-seen order.
std::vector<std::pair<std::string, std::vector<const CounterRecord*>>> by_collector(
    const std::vector<CounterRecord>& rows) {
  std::vector<std::pair<std::string, std::vector<const CounterRecord*>>> out;
  for (const CounterRecord& r : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == r.collector; });
    if (it == out.end()) it = out.insert(out.end(), {r.collector, {}});
    it->second.push_back(&r);
  }
  return out;
}

/// ncu's headline metrics, with short names, in the order shown.
const std::vector<std::pair<std::string, std::string>>& headline() {
  static const std::vector<std::pair<std::string, std::string>> h = {
      {"lts__t_sector_hit_rate.pct", "L2 hit %"},
      {"l1tex__t_sector_hit_rate.pct", "L1 hit %"},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy %"},
      {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe %"},
      {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "FMA pipe %"},
      {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank conflicts"},
      {"cycles", "cycles"},
      {"instructions", "instructions"},
      {"cache-misses", "cache misses"},
      {"LLC-load-misses", "LLC load misses"},
  };
  return h;
}

}  // namespace

nlohmann::json counters_json(const std::vector<CounterRecord>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [collector, group] : by_collector(rows)) {
    const CounterRecord& first = *group.front();
    nlohmann::json c = {{"collector", collector},
                        {"source", first.source},
                        {"tool", first.tool},
                        {"counters_version", first.counters_version},
                        {"created_at", first.created_at}};
    nlohmann::json readings = nlohmann::json::object();
    for (const CounterRecord* r : group) {
      if (r->source == "unavailable")
        c["unavailable"] = r->note;
      else
        readings[r->name] = {{"value", *r->value}, {"unit", r->unit}};
    }
    c["readings"] = readings;
    out.push_back(c);
  }
  return out;
}

std::vector<std::pair<std::string, double>> top_stalls(const std::vector<CounterRecord>& rows,
                                                       std::size_t n) {
  std::vector<std::pair<std::string, double>> stalls;
  const std::string prefix = kStallPrefix;
  for (const CounterRecord& r : rows) {
    if (!r.value || r.name.rfind(prefix, 0) != 0) continue;
    std::string reason = r.name.substr(prefix.size());
    reason = reason.substr(0, reason.find('.'));
    stalls.emplace_back(reason, *r.value);
  }
  std::stable_sort(stalls.begin(), stalls.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (stalls.size() > n) stalls.resize(n);
  return stalls;
}

std::string counters_line(const std::vector<CounterRecord>& rows) {
  std::string line;
  for (const auto& [collector, group] : by_collector(rows)) {
    if (collector == "model") continue;
    std::map<std::string, double> values;
    std::string unavailable;
    for (const CounterRecord* r : group) {
      if (r->source == "unavailable")
        unavailable = r->note;
      else
        values[r->name] = *r->value;
    }
    std::string part = collector + ": ";
    if (!unavailable.empty()) {
      part += unavailable;
    } else {
      std::vector<std::string> items;
      if (values.count("dram__bytes_read.sum") || values.count("dram__bytes_write.sum")) {
        items.push_back("DRAM " +
                        number((values["dram__bytes_read.sum"] + values["dram__bytes_write.sum"]) / 1e6) +
                        " MB");
      }
      for (const auto& [name, label] : headline()) {
        if (values.count(name)) items.push_back(label + " " + number(values[name]));
      }
      std::string stalls;
      std::vector<CounterRecord> own;
      for (const CounterRecord* r : group) own.push_back(*r);
      for (const auto& [reason, v] : top_stalls(own)) stalls += " " + reason + " " + number(v);
      if (!stalls.empty()) items.push_back("top stalls" + stalls);
      for (std::size_t i = 0; i < items.size(); ++i) part += (i ? ", " : "") + items[i];
    }
    line += (line.empty() ? "" : "; ") + part;
  }
  return line;
}

std::vector<CounterRecord> with_model_rows(std::vector<CounterRecord> rows, const ProblemRecord& problem,
                                           double median_ms) {
  const bool has_model =
      std::any_of(rows.begin(), rows.end(), [](const CounterRecord& r) { return r.name == "model_bytes"; });
  const auto t = throughput_of(problem, median_ms);
  if (has_model || !t) return rows;
  for (auto [name, per_s] : {std::pair{"model_bytes", t->gbps}, std::pair{"model_flops", t->gflops}}) {
    CounterRecord r;
    r.source = r.collector = "model";
    r.name = name;
    r.value = per_s * median_ms * 1e6;  // 1e9 per second over milliseconds
    rows.push_back(r);
  }
  return rows;
}

BoundVerdict verdict_for(double median_ms, const std::vector<CounterRecord>& rows,
                         const std::optional<DeviceCeilings>& ceilings, const std::string& dtype) {
  BoundEvidence e = evidence_from_counters(rows, median_ms);
  if (ceilings) {
    e.bandwidth_gbs = ceilings->bandwidth_gbs;
    const bool half = dtype == "f16" || dtype == "bf16";
    e.peak_gflops = half && ceilings->fp16_gflops > 0 ? ceilings->fp16_gflops : ceilings->fp32_gflops;
    e.bandwidth_name = ceilings->measured_bandwidth ? "measured copy bandwidth"
                                                    : "memory bandwidth (" + ceilings->source + ")";
    const bool measured_peak = ceilings->measured_fp32 && !(half && ceilings->fp16_gflops > 0);
    e.flops_name = measured_peak ? "measured FP32 FMA peak" : "peak FLOP/s (" + ceilings->source + ")";
  }
  return classify_bound(e);
}

}  // namespace kforge::report
