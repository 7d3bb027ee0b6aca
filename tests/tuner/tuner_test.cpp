// The tuner on PoCL: a planted wrong variant is caught and named, every
// candidate is stored with its status, a rerun reuses what is stored.
#include "tuner/tuner.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <set>

#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/cuda/cuda_backend.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/device/opencl/opencl_backend.hpp"
#include "tests/test_util.hpp"
#include "tuner/pipeline/compile_pipeline.hpp"

using namespace kforge;

namespace {

const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";

Problem gemm_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, const char* layout) {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", m}, {"N", n}, {"K", k}, {"batch", batch}};
  p.dtype = Dtype::kF32;
  p.layout = *parse_layout(layout);
  return p;
}

Problem small_problem(const char* layout) { return gemm_problem(33, 17, 9, 2, layout); }

/// The built-in templates and one of tests/data/templates.
TemplateCatalog catalog_with(const std::string& test_template) {
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  REQUIRE(catalog->add_dir(std::string(KFORGE_TEST_DATA_DIR) + "/templates/" + test_template).ok());
  return std::move(*catalog);
}

TuneRequest request_for(const TemplateCatalog& catalog, Problem p) {
  TuneRequest req;
  req.problem = std::move(p);
  req.templates = {catalog.find("gemm_naive_planted")};
  req.strategy = "exhaustive";
  req.protocol.warmup = 1;
  req.protocol.min_reps = 3;
  req.protocol.max_reps = 3;
  return req;
}

}  // namespace

TEST_CASE("a sweep records every candidate and catches the planted flaw", "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  REQUIRE(catalog->add_dir(kPlanted).ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);

  const char* layout = GENERATE("NN", "TT");
  auto req = request_for(*catalog, small_problem(layout));
  int events = 0, retimes = 0;
  auto summary = tuner.run(req, [&](const TuneEvent& e) {
    // Phases come between candidates; each candidate, the start and the end once.
    if (e.kind == TuneEvent::Kind::kPhase) {
      retimes += e.phase == TuneEvent::Phase::kRetime;
    } else if (e.kind != TuneEvent::Kind::kLeaderChanged) {
      ++events;
    }
  });
  REQUIRE(summary.ok());
  CHECK(summary->counts.evaluated == 8);
  CHECK(summary->counts.failed == 4);
  CHECK(events == 8 + 2);
  CHECK(retimes == 1);
  for (const auto& o : summary->outcomes) {
    INFO(o.config << " " << o.reason);
    if (o.config.find("FLAW1") != std::string::npos) {
      CHECK(o.status == CandidateStatus::kWrongResult);
      CHECK_THAT(o.reason, Catch::Contains("gemm_naive_planted") && Catch::Contains(o.config) &&
                               Catch::Contains("first bad index") && Catch::Contains("threshold") &&
                               Catch::Contains("rerun: kforge tune"));
    } else {
      CHECK(o.status == CandidateStatus::kOk);
      // max_reps, or fewer when cut as far slower than the best (the
      // untimed validation launch counts toward the cut, so it can come after one).
      if (o.timing.stop == TimingStop::kCut) {
        CHECK(o.timing.count >= 1);
        CHECK_THAT(o.reason, Catch::Contains("and 1 untimed launch:"));
      } else {
        CHECK(o.timing.count == 3);
      }
      CHECK(o.timing.median_ms > 0);
      CHECK(o.error_ratio <= 1.0);
    }
  }
  REQUIRE(summary->winner);
  CHECK(summary->winner->config.find("FLAW0") != std::string::npos);
  REQUIRE(summary->default_result);
  CHECK(summary->default_result->config == "BX8_BY4_FLAW0");

  // Everything is in the database, with status and timing distribution;
  // the three fastest were re-timed interleaved and store that timing.
  auto rows = (*db)->results({});
  REQUIRE(rows.ok());
  CHECK(rows->size() == 8);
  int retimed = 0;
  for (const auto& r : *rows) {
    CHECK(!r.status.empty());
    if (r.status == "ok") {
      const bool finalist = r.reason.find("re-timed interleaved") != std::string::npos;
      retimed += finalist ? 1 : 0;
      const bool cut = r.reason.find("cut after") != std::string::npos;
      if (finalist) {
        // Raced: at least the rounds before the race, at most all of them.
        CHECK(r.count >= std::min(req.protocol.finalist_race_after, req.protocol.finalist_rounds));
        CHECK(r.count <= req.protocol.finalist_rounds);
      } else if (cut) {
        CHECK(r.count >= 1);
      } else {
        CHECK(r.count == 3);
      }
      CHECK(r.p20_ms <= r.median_ms);
      CHECK(r.median_ms <= r.p80_ms);
    }
  }
  // The three fastest by search median, and any other within 10% of the
  // fastest (choose_finalists), at most six.
  std::vector<double> search_medians;
  for (const auto& o : summary->outcomes) {
    search_medians.push_back(o.status == CandidateStatus::kOk ? o.timing.median_ms : 0.0);
  }
  const auto chosen = choose_finalists(search_medians, req.protocol);
  CHECK(chosen.size() >= 3);
  CHECK(chosen.size() <= 6);
  // More are re-timed only when the machine's speed changed between the
  // search and the re-timing (finalist_retiming.hpp): those come after.
  CHECK(retimed == static_cast<int>(summary->finalists.size()));
  REQUIRE(summary->finalists.size() >= chosen.size());
  CHECK((summary->retiming.retimings == 1) == (summary->finalists.size() == chosen.size()));
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    CHECK(summary->finalists[k].outcome.config == summary->outcomes[chosen[k]].config);
  }
  // The declared winner is the database's: its stored median, the fastest stored.
  auto winners = (*db)->winners({});
  REQUIRE(winners.ok());
  std::string stored_best;
  double stored_ms = 0;
  for (const auto& w : *winners) {
    if (w.layout == layout && (stored_best.empty() || w.median_ms < stored_ms)) {
      stored_best = w.config;
      stored_ms = w.median_ms;
    }
  }
  CHECK(summary->winner->config == stored_best);
  CHECK(summary->winner->timing.median_ms == Approx(stored_ms));

  // The sweep records what each flush wrote: twice the cache PoCL reports
  // (the host's last-level cache), at least 32 MiB.
  auto sweeps = (*db)->sweeps();
  REQUIRE(sweeps.ok());
  REQUIRE_FALSE(sweeps->empty());
  const auto settings = nlohmann::json::parse(sweeps->back().settings_json);
  const auto reported = static_cast<std::size_t>((*device)->info().cache_bytes);
  CHECK(settings.value("cache_flush_bytes", std::size_t{0}) == std::max(2 * reported, std::size_t{32} << 20));
  // and how it flushed: PoCL's buffers are host memory, evicted line by line.
  CHECK(settings.value("cache_flush_method", std::string()) ==
        flush_method_name((*device)->cache_flush().method));
  CHECK(settings.value("cache_flush_method", std::string()) == "evict");

  // A rerun of the same sweep evaluates nothing again.
  auto again = tuner.run(req);
  REQUIRE(again.ok());
  CHECK(again->counts.evaluated == 0);
  CHECK(again->counts.reused == 8);
  CHECK(again->counts.failed == 4);
  CHECK((*db)->results({})->size() == 8);
}

TEST_CASE("the first timed launch is the poisoned-output run: a kernel that reads C when beta is 0 fails it",
          "[tuner][opencl]") {
  // The accumulate run, untimed, cannot see this bug (C holds numbers
  // there); the poisoned-output run, which is also the first timed launch,
  // must, and its sample must not be kept.
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const TemplateCatalog catalog = catalog_with("gemm_reads_c");
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);
  TuneRequest req = request_for(catalog, small_problem("NN"));
  req.templates = {catalog.find("gemm_reads_c")};
  auto summary = tuner.run(req, {});
  REQUIRE(summary.ok());
  CHECK(summary->counts.evaluated == 4);
  for (const auto& o : summary->outcomes) {
    INFO(o.config << " " << o.reason);
    if (o.config.find("RC1") != std::string::npos) {
      CHECK(o.status == CandidateStatus::kWrongResult);
      CHECK_THAT(o.reason, Catch::Contains("poisoned-output run") && Catch::Contains(o.config));
      CHECK(o.timing.count == 0);
    } else {
      CHECK(o.status == CandidateStatus::kOk);
      CHECK(o.timing.count == (o.timing.stop == TimingStop::kCut ? 1 : 3));
    }
  }
  REQUIRE(summary->winner);
  CHECK(summary->winner->config.find("RC0") != std::string::npos);
}

TEST_CASE("a kernel writing past its output's end fails validation naming the output", "[tuner][opencl]") {
  // Issue 56: writing y[n] and y[n + 1] left every element right and passed.
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const TemplateCatalog catalog = catalog_with("gemm_writes_past");
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);
  TuneRequest req = request_for(catalog, small_problem("NN"));
  req.templates = {catalog.find("gemm_writes_past")};
  auto summary = tuner.run(req, {});
  REQUIRE(summary.ok());
  CHECK(summary->counts.evaluated == 4);
  for (const auto& o : summary->outcomes) {
    INFO(o.config << " " << o.reason);
    if (o.config.find("OOB1") != std::string::npos) {
      CHECK(o.status == CandidateStatus::kWrongResult);
      CHECK_THAT(o.reason, Catch::Contains("output C written past its end: guard byte 0 of") &&
                               Catch::Contains(o.config));
    } else {
      CHECK(o.status == CandidateStatus::kOk);  // the guard, restored, blames no later candidate
    }
  }
}

TEST_CASE("a batch is validated first and timed fastest first, so its slow candidates are cut against its fastest",
          "[tuner][opencl]") {
  // gemm_repeat: REP8 does 8 times REP1's work. The strategy proposes the
  // default (BX8_REP8, never cut: the speedup's baseline), then BX4_REP8,
  // which in that order has only another REP8 to be cut against; fastest
  // first, the REP1 come first and cut both other REP8.
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const TemplateCatalog catalog = catalog_with("gemm_repeat");
  GemmOperator gemm;
  const Problem p = gemm_problem(128, 128, 128, 1, "NN");
  for (const bool fastest_first : {true, false}) {
    INFO("fastest first: " << fastest_first);
    auto db = Database::open(dir.file(fastest_first ? "fast.db" : "order.db"), Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    Tuner tuner(**device, **db, gemm);
    TuneRequest req = request_for(catalog, p);
    req.templates = {catalog.find("gemm_repeat")};
    req.compile_overlap = TuneRequest::CompileOverlap::kOff;
    req.fastest_first = fastest_first;
    auto s = tuner.run(req, {});
    REQUIRE(s.ok());
    REQUIRE(s->outcomes.size() == 6);
    CHECK(s->pipeline.validated_ahead == (fastest_first ? 6 : 0));
    std::map<std::string, TimingStop> stop;
    for (const auto& o : s->outcomes) {
      CHECK(o.status == CandidateStatus::kOk);
      stop[o.config] = o.timing.stop;
    }
    if (fastest_first) {
      for (std::size_t i = 0; i < 3; ++i) CHECK(s->outcomes[i].config.find("REP1") != std::string::npos);
      CHECK(stop["BX4_REP8"] == TimingStop::kCut);
      CHECK(stop["BX16_REP8"] == TimingStop::kCut);
    } else {
      CHECK(s->outcomes[0].config == "BX8_REP8");
      // Timed before any REP1: only the default, of the same work, can cut
      // it, which a loaded host sometimes does; whether it does is timing.
      CHECK(s->outcomes[1].config == "BX4_REP8");
    }
    CHECK(stop["BX8_REP8"] != TimingStop::kCut);  // the default, either way
    REQUIRE(s->winner);
    CHECK(s->winner->config.find("REP1") != std::string::npos);
  }
}

TEST_CASE("templates sharing an evaluation budget are timed in the strategy's order", "[tuner][opencl]") {
  // How much of a template's validated run its turns would reach depends on
  // the other template's: fastest first there could change the set the
  // budget evaluates, so it is off; with the budget one template's, it is on.
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  TemplateCatalog catalog = catalog_with("gemm_repeat");
  REQUIRE(catalog.add_dir(kPlanted).ok());
  GemmOperator gemm;
  for (const bool shared : {true, false}) {
    INFO("two templates: " << shared);
    auto db = Database::open(dir.file(shared ? "shared.db" : "one.db"), Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    Tuner tuner(**device, **db, gemm);
    TuneRequest req = request_for(catalog, gemm_problem(64, 64, 64, 1, "NN"));
    req.templates = {catalog.find("gemm_repeat")};
    if (shared) req.templates.push_back(catalog.find("gemm_naive_planted"));
    req.compile_overlap = TuneRequest::CompileOverlap::kOff;
    req.max_evals = 4;
    auto s = tuner.run(req, {});
    REQUIRE(s.ok());
    CHECK(s->outcomes.size() == 4);
    CHECK(s->pipeline.validated_ahead == (shared ? 0 : 4));
  }
}

TEST_CASE("max-evals bounds a random sweep and the same seed picks the same set", "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog->add_dir(kPlanted).ok());
  GemmOperator gemm;
  std::vector<std::set<std::string>> picked;
  for (const char* name : {"a.db", "b.db"}) {
    auto db = Database::open(dir.file(name), Database::Mode::kReadWrite);
    Tuner tuner(**device, **db, gemm);
    auto req = request_for(*catalog, small_problem("NT"));
    req.strategy = "random";
    req.max_evals = 3;
    req.seed = 99;
    req.fastest_first = false;  // the order proposed, checked below
    auto s = tuner.run(req);
    REQUIRE(s.ok());
    CHECK(s->outcomes.size() == 3);
    CHECK(s->outcomes.front().config == "BX8_BY4_FLAW0");  // the default comes first
    std::set<std::string> configs;
    for (const auto& o : s->outcomes) configs.insert(o.config);
    picked.push_back(configs);
  }
  CHECK(picked[0] == picked[1]);
}

TEST_CASE("only_config evaluates one named configuration", "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog->add_dir(kPlanted).ok());
  auto db = Database::open(dir.file("c.db"), Database::Mode::kReadWrite);
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);
  auto req = request_for(*catalog, small_problem("TN"));
  req.only_config = "BX16_BY8_FLAW1";
  auto s = tuner.run(req);
  REQUIRE(s.ok());
  REQUIRE(s->outcomes.size() == 1);
  CHECK(s->outcomes[0].status == CandidateStatus::kWrongResult);

  req.only_config = "BX12_BY8_FLAW0";  // 12 is not a declared value
  auto bad = tuner.run(req);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kBadInput);
}

TEST_CASE("compiling ahead while measuring gives every candidate the outcome it gets between timed runs",
          "[tuner][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog->add_dir(kPlanted).ok());
  GemmOperator gemm;
  // Auto: never on a CPU device, whose kernels share the cores with the compiler.
  TuneRequest automatic;
  CHECK_FALSE(compile_overlaps(automatic, DeviceType::kCpu));
  CHECK(compile_overlaps(automatic, DeviceType::kGpu));
  std::map<TuneRequest::CompileOverlap, std::set<std::pair<std::string, std::string>>> outcomes;
  for (auto mode : {TuneRequest::CompileOverlap::kOff, TuneRequest::CompileOverlap::kOn}) {
    auto db = Database::open(dir.file(mode == TuneRequest::CompileOverlap::kOn ? "on.db" : "off.db"),
                             Database::Mode::kReadWrite);
    Tuner tuner(**device, **db, gemm);
    auto req = request_for(*catalog, small_problem("NN"));
    req.compile_overlap = mode;
    req.compile_threads = 2;
    auto s = tuner.run(req);
    REQUIRE(s.ok());
    CHECK(s->pipeline.compile_overlap == (mode == TuneRequest::CompileOverlap::kOn));
    CHECK(s->counts.evaluated == 8);
    for (const auto& o : s->outcomes) outcomes[mode].insert({o.config, std::string(status_name(o.status))});
  }
  CHECK(outcomes[TuneRequest::CompileOverlap::kOn] == outcomes[TuneRequest::CompileOverlap::kOff]);
  CHECK(outcomes[TuneRequest::CompileOverlap::kOn].count({"BX8_BY4_FLAW1", "wrong_result"}) == 1);
}

TEST_CASE("code generators: on PoCL with its kernel cache, one per compile thread, when batches compile between "
          "timed runs", "[tuner]") {
  const CodeGeneration nvrtc = make_nvrtc_compiler("sm_90")->code_generation();
  TuneRequest req;
  req.compile_threads = 2;
  CHECK(code_generators(req, pocl_code_generation(), true) == 2);
  CHECK(code_generators(req, pocl_code_generation(), false) == 0);  // overlapping, or no compiling ahead
  CHECK(code_generators(req, nvrtc, true) == 0);  // compiles concurrently in threads already
  req.compile_threads = 1;
  CHECK(code_generators(req, pocl_code_generation(), true) == 0);
  req.compile_threads = 3;
  {
    const test::ScopedEnv no_cache("POCL_KERNEL_CACHE", "0");
    CHECK(code_generators(req, pocl_code_generation(), true) ==
          0);  // nothing would carry the generated code across
  }
  CHECK(code_generators(req, pocl_code_generation(), true) == 3);
}

TEST_CASE("the compile pipeline is planned once from the device's type and its compiler", "[tuner][opencl]") {
  auto pocl = open_device("auto");
  REQUIRE(pocl.ok());
  TuneRequest req;
  req.compile_threads = 2;
  // PoCL on the CPU: batches between timed runs, each thread's share one
  // program, code generators for the worker, the batch validated first.
  CompilePipeline p = plan_compile_pipeline(req, DeviceType::kCpu, &(*pocl)->compiler(), 1, true);
  CHECK_FALSE(p.overlap);
  CHECK(p.combine);
  CHECK(p.batch == 16);
  CHECK(p.code_generators == 2);
  CHECK(p.validate_ahead);
  CHECK(plan_compile_pipeline(req, DeviceType::kCpu, &(*pocl)->compiler(), 1, false).code_generators == 0);
  req.max_evals = 5;  // a budget shared turn by turn: timed in the strategy's order
  CHECK_FALSE(plan_compile_pipeline(req, DeviceType::kCpu, &(*pocl)->compiler(), 2, true).validate_ahead);
  CHECK(plan_compile_pipeline(req, DeviceType::kCpu, &(*pocl)->compiler(), 1, true).validate_ahead);

  // NVRTC on a GPU: compiles overlap the timed runs, one program each.
  const auto nvrtc = make_nvrtc_compiler("sm_90");
  req = TuneRequest{};
  req.compile_threads = 2;
  p = plan_compile_pipeline(req, DeviceType::kGpu, nvrtc.get(), 1, true);
  CHECK(p.overlap);
  CHECK_FALSE(p.combine);
  CHECK(p.batch == 4);
  CHECK(p.code_generators == 0);
  CHECK_FALSE(p.validate_ahead);

  // Templates whose kind has no Compiler (library calls, Triton): nothing combined or generated ahead.
  req.compile_threads = 2;
  p = plan_compile_pipeline(req, DeviceType::kCpu, nullptr, 1, true);
  CHECK_FALSE(p.combine);
  CHECK(p.code_generators == 0);
  CHECK(p.batch == 4);

  // No compiling ahead: nothing of the rest.
  req.compile_threads = -1;
  p = plan_compile_pipeline(req, DeviceType::kCpu, &(*pocl)->compiler(), 1, true);
  CHECK(p.batch == 0);
  CHECK_FALSE(p.overlap);
  CHECK(p.code_generators == 0);
  CHECK_FALSE(p.validate_ahead);
}
