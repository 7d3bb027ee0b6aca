// Lookup latency of the runtime library, against a launch of the kernel it
// selects: hot select (C++ and C API, p50/p99 over batches), cold start
// (open the database, select, get a launchable kernel), and launches.
// Prints one JSON object; bench/lookup_latency.py adds the environment.
//   kforge_bench_lookup DB [M N K] [--calls N] [--cache-dir DIR | --no-binary-cache]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bindings/c/kforge.h"
#include "generator/gemm_operator.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/lookup/lookup.hpp"

using namespace kforge;
using Clock = std::chrono::steady_clock;

namespace {

double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

nlohmann::json percentiles(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<std::size_t>(q * v.size()))]; };
  return {{"p50", at(0.50)}, {"p99", at(0.99)}, {"min", v.front()}, {"max", v.back()}, {"samples", v.size()}};
}

/// Per-call time of `call`, in ns: batches of `batch` calls timed together
/// (a clock read costs about as much as a hot lookup), one sample per batch.
template <typename F>
nlohmann::json per_call(F&& call, std::size_t calls, std::size_t batch) {
  std::vector<double> samples;
  samples.reserve(calls / batch);
  for (std::size_t b = 0; b < calls / batch; ++b) {
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < batch; ++i) call();
    samples.push_back(ns_since(t0) / static_cast<double>(batch));
  }
  auto j = percentiles(std::move(samples));
  j["batch"] = batch;
  return j;
}

[[noreturn]] void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), e.message.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    return std::fprintf(stderr, "usage: kforge_bench_lookup DB [M N K] [--calls N] "
                                "[--cache-dir DIR | --no-binary-cache]\n"), 2;
  }
  const std::string db = argv[1];
  std::int64_t m = 256, n = 256, k = 256;
  std::size_t calls = 2'000'000;
  std::string cache_dir;
  bool use_cache = true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) calls = std::stoull(argv[++i]);
    else if (std::strcmp(argv[i], "--cache-dir") == 0 && i + 1 < argc) cache_dir = argv[++i];
    else if (std::strcmp(argv[i], "--no-binary-cache") == 0) use_cache = false;
    else if (i + 2 < argc) {
      m = std::atoll(argv[i]);
      n = std::atoll(argv[i + 1]);
      k = std::atoll(argv[i + 2]);
      i += 2;
    }
  }
  nlohmann::json out;
  auto t0 = Clock::now();
  auto device = open_device("auto");
  if (!device.ok()) die("device", device.error());
  out["device_open_ms"] = ns_since(t0) / 1e6;
  out["device"] = (*device)->info().to_json();
  auto catalog = TemplateCatalog::builtin();
  if (!catalog.ok()) die("templates", catalog.error());
  const Problem problem{"gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", 1}}, Dtype::kF32, Layout{}, {}, {}};
  out["problem"] = problem.key();

  // Cold start: open the database, select, get a launchable kernel. Whether
  // kforge's binary cache and the compiler's own disk cache are warm is up
  // to the caller (the script runs this with each of them cold and warm).
  LookupOptions options;
  options.user_db = db;
  options.binary_cache_dir = cache_dir;
  options.use_binary_cache = use_cache;
  t0 = Clock::now();
  auto lookup = Lookup::open(options, **device, *catalog);
  if (!lookup.ok()) die("open", lookup.error());
  const double open_ns = ns_since(t0);
  auto sel = (*lookup)->select_ref(problem);
  if (!sel.ok()) die("select", sel.error());
  const double select_ns = ns_since(t0) - open_ns;
  auto prepared = (*lookup)->prepare(**sel);
  if (!prepared.ok()) die("prepare", prepared.error());
  const double total_ns = ns_since(t0);
  out["selection"] = {{"rule", std::string(name((*sel)->rule))}, {"template", (*sel)->template_name}, {"config", (*sel)->config}};
  out["kernel"] = {{"origin", (*prepared)->origin},
                   {"cache_entry", (*prepared)->cache_entry},
                   {"binary_cache_dir", (*lookup)->binary_cache_dir()}};
  out["cold_start_ms"] = {{"open_db", open_ns / 1e6},
                          {"first_select", select_ns / 1e6},
                          {"get_kernel", (total_ns - open_ns - select_ns) / 1e6},
                          {"total", total_ns / 1e6}};

  // Hot: the cached select, C++ and C.
  const Problem same = problem;
  volatile const Selection* sink = nullptr;
  out["hot_select_ns"] = per_call([&] { sink = *(*lookup)->select_ref(same); }, calls, 64);
  kforge_options copts;
  kforge_options_init(&copts);
  copts.user_db = db.c_str();
  kforge_lookup* c = nullptr;
  if (kforge_open(&copts, &c) != KFORGE_OK) die("kforge_open", Error::internal(kforge_last_error()));
  const kforge_dim dims[] = {{"M", m}, {"N", n}, {"K", k}};
  const kforge_problem cp = {"gemm", dims, 3, "f32", "NN"};
  const kforge_selection* csel = nullptr;
  if (kforge_select(c, &cp, &csel) != KFORGE_OK) die("kforge_select", Error::internal(kforge_last_error()));
  out["hot_select_c_ns"] = per_call([&] { (void)kforge_select(c, &cp, &csel); }, calls, 64);
  kforge_close(c);
  (void)sink;

  // Launches of the same kernel: host wall time (enqueue to completion) and device time.
  GemmOperator gemm;
  Workload w = gemm.make_workload((*sel)->problem, 1, WorkloadKind::kPoisonedOutput);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  for (const auto& t : w.tensors) {
    bufs.push_back(std::move((*device)->allocate(t.bytes.size()).value()));
    (void)(*device)->write(*bufs.back(), t.bytes.data(), t.bytes.size()).value();
  }
  for (const auto& a : w.args) {
    if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
    else args.push_back(KernelArg::of(a.f32));
  }
  // The first launch apart: a driver may finish code generation there (PoCL
  // builds its work-group function for the launch's local size at first use).
  std::vector<double> wall, dev;
  for (int i = 0; i < 53; ++i) {
    t0 = Clock::now();
    auto ms = (*lookup)->launch(**sel, args);
    if (!ms.ok()) die("launch", ms.error());
    if (i == 0) out["first_launch_wall_ms"] = ns_since(t0) / 1e6;
    if (i < 3) continue;  // warm-up
    wall.push_back(ns_since(t0));
    dev.push_back(*ms * 1e6);
  }
  out["launch_wall_ns"] = percentiles(wall);
  out["launch_device_ns"] = percentiles(dev);
  const double launch_p50 = out["launch_wall_ns"]["p50"].get<double>();
  out["ratios"] = {{"hot_select_p50_over_launch_p50", out["hot_select_ns"]["p50"].get<double>() / launch_p50},
                   {"hot_select_c_p50_over_launch_p50", out["hot_select_c_ns"]["p50"].get<double>() / launch_p50},
                   {"cold_start_over_launch_p50", total_ns / launch_p50},
                   {"cold_start_and_first_launch_over_launch_p50",
                    (total_ns + out["first_launch_wall_ms"].get<double>() * 1e6) / launch_p50}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
