// Fixture tuning databases for the export, compare, capabilities and report
// tests, built through the Database API so they follow the schema as it
// migrates. Everything is deterministic (fixed timestamps, a fixed-seed
// generator of timing samples), so the outputs can be compared with golden
// files under tests/data/golden/ (README.md there says how to regenerate them).
//
// Contents (kBase):
//   devices   fixture-pocl (opencl, x86_64-haswell), fixture-h200 (cuda sm_90,
//             "NVIDIA H200"), fixture-mi300x (hip gfx942)
//   templates gemm_simt_tiled at its current hash on opencl and cuda (the
//             built-in manifest stored as its text, full configuration
//             names) and at an old hash (stale, a small fixed manifest
//             declaring BM, BN, TM) on opencl; the fixture templates of tests/data/templates
//             (unknown to the built-in catalog) fixture_gemm_mma on cuda
//             (stored with the small manifest, which declares the
//             candidates) and fixture_gemm_portable on hip, at their
//             current hashes
//   problems  gemm 256^3 f32 NN, gemm 512^3 f32 NN, gemm 1024^3 f16 NT
//   results   per (device, problem) a dozen candidates with 20 timing samples
//             each (about +-3% noise) and failures of every kind
// kNew is kBase re-tuned: pocl/256 is 20% slower, pocl/512 changed within
// noise, h200/1024 is 20% faster, every candidate of h200/512 fails,
// mi300x/512 is missing, and pocl gets a new problem (gemm 128^3).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "generator/config.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge::test {

enum class Fixture { kBase, kNew };

/// The stale hash stored for gemm_simt_tiled's old version.
inline const char* kStaleHash = "00005ta1e0000000";

/// Directory of a fixture template (tests/data/templates/NAME).
inline std::string fixture_template_dir(const std::string& name) {
  return std::string(KFORGE_TEST_DATA_DIR) + "/templates/" + name;
}

/// The hash kforge computes now for template `name` on `backend`: a built-in
/// one, or a fixture template under tests/data/templates.
inline std::string current_hash(const std::string& name, const std::string& backend) {
  auto catalog = TemplateCatalog::builtin();
  if (const TemplateSource* t = catalog.ok() ? catalog->find(name) : nullptr) return t->hash(prelude_text(backend));
  auto t = TemplateSource::load_dir(fixture_template_dir(name));
  if (!t.ok()) throw std::runtime_error("fixture template: " + t.error().message);
  return t->hash(prelude_text(backend));
}

/// The hashes of the fixture, each with the placeholder golden files use for
/// it (they change whenever a template or prelude does).
inline std::vector<std::pair<std::string, std::string>> fixture_hash_placeholders() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* backend : {"opencl", "cuda", "hip"}) {
    for (const char* name : {"gemm_simt_tiled", "fixture_gemm_mma", "fixture_gemm_portable"})
      out.push_back({current_hash(name, backend), std::string("@") + name + ":" + backend + "@"});
  }
  return out;
}

/// The manifest text of a fixture template directory.
inline std::string fixture_manifest_text(const std::string& name) {
  auto t = TemplateSource::load_dir(fixture_template_dir(name));
  if (!t.ok()) throw std::runtime_error("fixture template: " + t.error().message);
  return t->manifest_text;
}

/// The built-in gemm_simt_tiled, whose current versions the fixture stores.
inline const TemplateSource& builtin_simt() {
  static const TemplateCatalog catalog = TemplateCatalog::builtin().value();
  return *catalog.find("gemm_simt_tiled");
}

/// A fixture configuration (BM, BN, TM) as the built-in gemm_simt_tiled
/// names it: its other parameters at their defaults.
inline std::string simt_config(const std::string& fixture_config) {
  Config c = Config::parse(fixture_config).value();
  for (const auto& p : builtin_simt().manifest.parameters) c.values.try_emplace(p.name, p.default_value);
  return c.canonical_name();
}

/// A small valid manifest stored as a template version's text (the database
/// keeps what it is given; the report reads the default configuration from it).
inline std::string fixture_manifest(const std::string& name, const std::string& targets) {
  return R"J({"schema_version": 1, "name": ")J" + name + R"J(", "operator": "gemm",
  "description": "fixture", "source": "k.c", "kernel": "k", "targets": )J" + targets + R"J(,
  "dtypes": ["f32", "f16"], "layouts": ["NN", "NT"],
  "parameters": [
    {"name": "BM", "values": [16, 32, 64], "default": 32, "doc": "rows"},
    {"name": "BN", "values": [16, 32, 64], "default": 32, "doc": "columns"},
    {"name": "TM", "values": [1, 2, 4], "default": 2, "doc": "rows per thread"}
  ],
  "launch": {"block": ["BN / TM", "BM / TM", "1"], "grid": ["ceil_div(N, BN)", "ceil_div(M, BM)", "batch"]}})J";
}

/// Deterministic noise in [-1, 1] (a 64-bit LCG; the same on every platform).
class FixtureNoise {
 public:
  explicit FixtureNoise(std::uint64_t seed) : s_(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  double next() {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s_ >> 11) / static_cast<double>(1ull << 53) * 2.0 - 1.0;
  }

 private:
  std::uint64_t s_;
};

/// Fills the timing fields of `r` from 20 samples around `ms` (+-3%).
inline void set_timing(ResultRecord& r, double ms, std::uint64_t seed) {
  FixtureNoise noise(seed);
  std::vector<double> s;
  for (int i = 0; i < 20; ++i) s.push_back(std::round(ms * (1.0 + 0.03 * noise.next()) * 1e6) / 1e6);
  nlohmann::json j = s;
  r.samples_json = j.dump();
  std::sort(s.begin(), s.end());
  auto q = [&s](double p) { return s[static_cast<std::size_t>(p * static_cast<double>(s.size() - 1) + 0.5)]; };
  r.median_ms = (s[9] + s[10]) / 2;
  r.p20_ms = q(0.2);
  r.p80_ms = q(0.8);
  r.min_ms = s.front();
  r.max_ms = s.back();
  r.count = 20;
}

struct FixtureCandidate {
  std::string config;
  std::string status;  ///< ok or a failure status
  double ms;           ///< for ok
};

/// The candidates evaluated for one (device, problem): the default
/// (BM32_BN32_TM2) first, a clear winner, failures of several kinds.
inline std::vector<FixtureCandidate> fixture_candidates(double base_ms) {
  return {{"BM32_BN32_TM2", "ok", base_ms * 1.6},  {"BM16_BN16_TM1", "ok", base_ms * 3.1},
          {"BM64_BN64_TM4", "ok", base_ms},        {"BM64_BN32_TM2", "ok", base_ms * 1.2},
          {"BM16_BN64_TM4", "compile_error", 0},   {"BM32_BN64_TM4", "ok", base_ms * 1.35},
          {"BM64_BN16_TM1", "wrong_result", 0},    {"BM32_BN16_TM1", "ok", base_ms * 2.2},
          {"BM64_BN64_TM1", "resource_limit", 0},  {"BM16_BN32_TM2", "ok", base_ms * 2.6},
          {"BM32_BN32_TM4", "timeout", 0},         {"BM64_BN32_TM4", "ok", base_ms * 1.1}};
}

inline std::string failure_reason(const std::string& status) {
  if (status == "compile_error") return "error: use of undeclared identifier 'tile'";
  if (status == "wrong_result") return "C[17]: 3.25 vs reference 3.5, threshold 0.001";
  if (status == "resource_limit") return "needs 65536 bytes of local memory, device has 49152";
  if (status == "launch_error") return "CUDA_ERROR_LAUNCH_FAILED";
  return "killed after 10 s";
}

/// Builds the fixture database at `path` (a new file).
inline void build_fixture_db(const std::string& path, Fixture which) {
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  const bool neu = which == Fixture::kNew;

  struct Dev {
    DeviceRecord rec;
    std::int64_t id = 0;
  };
  auto device = [](const std::string& key, const std::string& backend, const std::string& vendor,
                   const std::string& name, const std::string& arch, int cus, int clock) {
    DeviceRecord d;
    d.key = key;
    d.backend = backend;
    d.vendor = vendor;
    d.name = name;
    d.arch = arch;
    d.info_json = nlohmann::json{{"backend", backend}, {"vendor", vendor},       {"name", name},
                                 {"arch", arch},       {"compute_units", cus},   {"clock_mhz", clock},
                                 {"driver_version", "fixture"}}
                      .dump();
    return d;
  };
  std::vector<Dev> devs = {
      {device("fixture-pocl", "opencl", "GenuineIntel", "cpu-haswell-Intel(R) Xeon(R) CPU", "x86_64-haswell", 2,
              2200)},
      {device("fixture-h200", "cuda", "NVIDIA Corporation", "NVIDIA H200", "sm_90", 132, 1980)},
      {device("fixture-mi300x", "hip", "Advanced Micro Devices, Inc.", "AMD Instinct MI300X", "gfx942", 304, 2100)}};
  for (auto& d : devs) d.id = db->put_device(d.rec).value();

  auto put_template = [&](const std::string& name, const std::string& hash, const std::string& manifest) {
    return db->put_template({0, name, "gemm", hash, manifest}).value();
  };
  // The current versions of gemm_simt_tiled store the built-in manifest
  // (what their hash covers) and their candidates' full names (simt_config);
  // the stale version a small manifest of its own, declaring the fixture's
  // candidates (BM, BN, TM) as they are: the winner slot only holds declared
  // configurations.
  const std::string simt_manifest = builtin_simt().manifest_text;
  const std::int64_t t_ocl = put_template("gemm_simt_tiled", current_hash("gemm_simt_tiled", "opencl"), simt_manifest);
  const std::int64_t t_stale = put_template("gemm_simt_tiled", kStaleHash,
                                            fixture_manifest("gemm_simt_tiled", R"(["opencl","cuda","hip"])"));
  const std::int64_t t_cuda = put_template("gemm_simt_tiled", current_hash("gemm_simt_tiled", "cuda"), simt_manifest);
  const std::int64_t t_mma = put_template("fixture_gemm_mma", current_hash("fixture_gemm_mma", "cuda"),
                                          fixture_manifest("fixture_gemm_mma", R"(["cuda","hip"])"));
  const std::int64_t t_portable = put_template("fixture_gemm_portable", current_hash("fixture_gemm_portable", "hip"),
                                               fixture_manifest_text("fixture_gemm_portable"));

  auto problem = [&](int n, const std::string& dtype, const std::string& layout) {
    const std::string dims = "K=" + std::to_string(n) + ",M=" + std::to_string(n) + ",N=" + std::to_string(n);
    ProblemRecord p;
    p.key = "gemm/" + dims + ",batch=1/" + dtype + "/" + layout;
    p.op = "gemm";
    p.dims_json = nlohmann::json{{"K", n}, {"M", n}, {"N", n}, {"batch", 1}}.dump();
    p.dtype = dtype;
    p.layout = layout;
    return db->put_problem(p).value();
  };
  const std::int64_t p256 = problem(256, "f32", "NN");
  const std::int64_t p512 = problem(512, "f32", "NN");
  const std::int64_t p1024 = problem(1024, "f16", "NT");
  const std::int64_t p128 = neu ? problem(128, "f32", "NN") : 0;

  SweepRecord sweep;
  sweep.tool_version = "0.1.0";
  sweep.git_revision = neu ? "fixture-new" : "fixture-base";
  sweep.command_line = "kforge tune --fixture";
  sweep.settings_json = R"({"strategy":"exhaustive","seed":7})";
  sweep.device_json = R"({"driver_version":"fixture"})";
  sweep.host = "fixture-host";
  sweep.started_at = neu ? "2024-06-02T09:00:00Z" : "2024-05-01T12:00:00Z";
  sweep.finished_at = neu ? "2024-06-02T10:00:00Z" : "2024-05-01T13:00:00Z";
  const std::int64_t sweep_id = db->begin_sweep(sweep).value();

  int minute = 0;
  auto tune = [&](std::int64_t device_id, std::int64_t template_id, std::int64_t problem_id, double base_ms,
                  std::uint64_t seed, double factor, bool all_fail = false) {
    for (auto c : fixture_candidates(base_ms)) {
      if (all_fail) c.status = "launch_error";
      ResultRecord r;
      r.sweep_id = sweep_id;
      r.device_id = device_id;
      r.template_id = template_id;
      r.problem_id = problem_id;
      r.config = template_id == t_ocl || template_id == t_cuda ? simt_config(c.config) : c.config;
      r.status = c.status;
      if (c.status == "ok") {
        set_timing(r, c.ms * factor, seed++);
        r.error_norm = 1.5e-7;
        r.error_ratio = 0.02;
      } else {
        r.reason = failure_reason(c.status);
      }
      r.compile_ms = 40 + (seed % 7);
      r.resources_json = R"({"registers":64,"local_memory_bytes":8192})";
      char stamp[32];
      const int secs = minute * 30;
      std::snprintf(stamp, sizeof stamp, "%sT%02d:%02d:%02dZ", neu ? "2024-06-02" : "2024-05-01", 12 + secs / 3600,
                    secs / 60 % 60, secs % 60);
      ++minute;
      r.created_at = stamp;
      db->add_result(r).value();
    }
  };
  const std::int64_t pocl = devs[0].id, h200 = devs[1].id, mi300x = devs[2].id;
  // Base seeds differ from new seeds so a re-tune draws fresh noise.
  const std::uint64_t s = neu ? 1000 : 0;
  tune(pocl, t_ocl, p256, 2.5, s + 100, neu ? 1.2 : 1.0);      // new: planted 20% regression
  tune(pocl, t_ocl, p512, 19.0, s + 200, neu ? 1.004 : 1.0);   // new: within noise
  tune(pocl, t_stale, p256, 3.0, s + 300, 1.0);                // an old template version: stale
  tune(h200, t_cuda, p1024, 0.05, s + 400, 1.0);
  tune(h200, t_mma, p1024, 0.012, s + 500, neu ? 0.8 : 1.0);   // new: 20% faster
  tune(h200, t_cuda, p512, 0.02, s + 600, 1.0, neu);           // new: every candidate fails
  if (!neu) tune(mi300x, t_portable, p512, 0.03, s + 700, 1.0);  // missing in new
  if (neu) tune(pocl, t_ocl, p128, 0.4, s + 800, 1.0);         // only in new
  db->finish_sweep(sweep_id, sweep.finished_at).value();
}

/// Stores ncu rows (a percentage where the name says .pct, else bytes) for
/// the fastest winner of (device key, problem key) in the database at `path`.
inline void store_winner_counters(const std::string& path, const std::string& device, const std::string& problem,
                                  const std::vector<std::pair<std::string, double>>& readings) {
  auto db = Database::open(path, Database::Mode::kReadWrite);
  if (!db.ok()) throw std::runtime_error(db.error().message);
  const auto winners = (*db)->winners();
  if (!winners.ok()) throw std::runtime_error(winners.error().message);
  std::int64_t id = 0;
  double best = 0;
  for (const auto& w : *winners)
    if (w.device_key == device && w.problem_key == problem && (!id || w.median_ms < best))
      id = w.result_id, best = w.median_ms;
  if (!id) throw std::runtime_error("no winner of " + problem + " on " + device + " in " + path);
  std::vector<CounterRecord> rows;
  for (const auto& [name, value] : readings) {
    CounterRecord r;
    r.source = r.collector = "ncu";
    r.name = name;
    r.value = value;
    r.unit = name.find(".pct") != std::string::npos ? "%" : "byte";
    rows.push_back(r);
  }
  if (auto st = (*db)->replace_counters(id, "ncu", rows); !st.ok()) throw std::runtime_error(st.error().message);
}

}  // namespace kforge::test
