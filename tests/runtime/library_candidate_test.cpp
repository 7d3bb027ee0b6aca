// Library candidates on PoCL: CLBlast's GEMM tuned beside the kernels,
// stored, selected, launched, a planted wrong call caught, and a missing
// library reported as unavailable.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <random>

#include "db/database.hpp"
#include "generator/gemm_operator.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/device_registry.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/lookup/lookup.hpp"
#include "tests/test_util.hpp"
#include "tuner/tuner.hpp"

using namespace kforge;

namespace {

Problem square_gemm(std::int64_t n, const char* layout) {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", n}, {"N", n}, {"K", n}, {"batch", 1}};
  p.dtype = Dtype::kF32;
  p.layout = *parse_layout(layout);
  return p;
}

TuneRequest request(const TemplateCatalog& catalog, Problem p, std::vector<std::string> names, int evals) {
  TuneRequest req;
  req.problem = std::move(p);
  for (const auto& n : names) {
    const TemplateSource* t = catalog.find(n);
    REQUIRE(t);
    req.templates.push_back(t);
  }
  req.strategy = "random";
  req.max_evals = evals;
  req.protocol.min_reps = 3;
  req.protocol.max_reps = 3;
  return req;
}

/// C = A * B (row-major, NN) on the host in double, for a launch's check.
std::vector<double> host_gemm(const std::vector<float>& a, const std::vector<float>& b, int n) {
  std::vector<double> c(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) c[i * n + j] += double(a[i * n + k]) * double(b[k * n + j]);
  return c;
}

/// Launches `sel` through the lookup on random A and B; the largest error against the host product.
double launch_error(Lookup& lookup, const Selection& sel, int n) {
  Device& device = lookup.device();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(n * n), b(n * n), c(n * n, NAN), bias(n, 0.0f);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  auto buf = [&](const std::vector<float>& h) {
    auto m = device.allocate(h.size() * sizeof(float));
    REQUIRE(m.ok());
    REQUIRE(device.write(**m, h.data(), h.size() * sizeof(float)).ok());
    return std::move(*m);
  };
  auto da = buf(a), db = buf(b), dc = buf(c), dbias = buf(bias);
  auto ms = lookup.launch(
      sel, {KernelArg::of(n), KernelArg::of(n), KernelArg::of(n), KernelArg::of(1.0f), KernelArg::of(*da),
            KernelArg::of(*db), KernelArg::of(0.0f), KernelArg::of(*dc), KernelArg::of(*dbias)});
  REQUIRE(ms.ok());
  REQUIRE(device.read(*dc, c.data(), c.size() * sizeof(float)).ok());
  const auto ref = host_gemm(a, b, n);
  double worst = 0;
  for (std::size_t i = 0; i < c.size(); ++i)
    worst = std::max(worst, std::isfinite(c[i]) ? std::fabs(c[i] - ref[i]) : 1e30);
  return worst;
}

}  // namespace

TEST_CASE("CLBlast loads here and names its version", "[library][opencl]") {
  const LibraryAvailability a = library_availability("clblast");
  INFO(a.unavailable);
  REQUIRE(a.unavailable.empty());  // tools/deps.sh installs libclblast-dev
  CHECK_THAT(a.identity, Catch::StartsWith("clblast ") && Catch::Contains("libclblast.so"));
}

TEST_CASE("a gemm tune with CLBlast stores it beside the kernels and the lookup picks the faster",
          "[library][opencl]") {
  test::TempDir dir;
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const std::string path = dir.file("t.db");
  {
    auto db = Database::open(path, Database::Mode::kReadWrite);
    REQUIRE(db.ok());
    GemmOperator gemm;
    Tuner tuner(**device, **db, gemm);
    auto summary =
        tuner.run(request(*catalog, square_gemm(64, "NN"), {"gemm_clblast", "gemm_simt_tiled"}, 4));
    REQUIRE(summary.ok());
    int library_ok = 0;
    for (const auto& o : summary->outcomes) {
      INFO(o.template_name << " " << o.config << " " << o.reason);
      CHECK(o.status == CandidateStatus::kOk);
      library_ok += o.template_name == "gemm_clblast" && o.status == CandidateStatus::kOk;
    }
    CHECK(library_ok == 2);  // both call forms at batch 1
  }
  auto db = Database::open(path, Database::Mode::kReadOnly);
  REQUIRE(db.ok());
  auto winners = (*db)->winners({});
  REQUIRE(winners.ok());
  std::map<std::string, double> best;
  for (const auto& w : *winners) best[w.template_name] = w.median_ms;
  REQUIRE(best.count("gemm_clblast"));
  REQUIRE(best.count("gemm_simt_tiled"));
  const std::string faster =
      best["gemm_clblast"] < best["gemm_simt_tiled"] ? "gemm_clblast" : "gemm_simt_tiled";

  LookupOptions options;
  options.user_db = path;
  options.use_binary_cache = false;
  auto lookup = Lookup::open(options, **device, *catalog);
  REQUIRE(lookup.ok());
  auto sel = (*lookup)->select(square_gemm(64, "NN"));
  REQUIRE(sel.ok());
  INFO(sel->explanation);
  CHECK(sel->rule == SelectionRule::kExact);
  CHECK(sel->template_name == faster);
  CHECK_THAT(sel->library_best, Catch::StartsWith("gemm_clblast "));
  CHECK_THAT(sel->kernel_best, Catch::StartsWith("gemm_simt_tiled "));
  CHECK_THAT(sel->explanation, Catch::Contains("compared: ") && Catch::Contains("x faster than"));
  CHECK(launch_error(**lookup, *sel, 64) < 1e-3);

  // Forced, the library is selected and its call launched; forbidden, the kernel.
  REQUIRE((*lookup)->set_library_policy("gemm", LibraryPolicy::kForce).ok());
  auto forced = (*lookup)->select(square_gemm(64, "NN"));
  REQUIRE(forced.ok());
  CHECK(forced->template_name == "gemm_clblast");
  CHECK(launch_error(**lookup, *forced, 64) < 1e-3);
  auto untuned = (*lookup)->select(square_gemm(48, "NN"));  // the library's default where nothing was tuned
  REQUIRE(untuned.ok());
  CHECK(untuned->template_name == "gemm_clblast");
  REQUIRE((*lookup)->set_library_policy("gemm", LibraryPolicy::kForbid).ok());
  auto forbidden = (*lookup)->select(square_gemm(64, "NN"));
  REQUIRE(forbidden.ok());
  CHECK(forbidden->template_name == "gemm_simt_tiled");
  CHECK_THAT(forbidden->explanation, Catch::Contains("library candidates are forbidden for gemm"));
  CHECK(launch_error(**lookup, *forbidden, 64) < 1e-3);
}

TEST_CASE("the environment forces library candidates per operator", "[library][opencl]") {
  test::ScopedEnv env("KFORGE_LIBRARY_GEMM", "force");
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  auto lookup = Lookup::open(LookupOptions{}, **device, *catalog);
  REQUIRE(lookup.ok());
  auto sel = (*lookup)->select(square_gemm(32, "NT"));
  REQUIRE(sel.ok());
  CHECK(sel->template_name == "gemm_clblast");
  CHECK(sel->rule == SelectionRule::kDefault);
}

TEST_CASE("a planted wrong library call fails validation and is named", "[library][opencl]") {
  test::ScopedEnv fault("KFORGE_FAULT_CLBLAST_SWAP_TRANSPOSE", "1");
  test::TempDir dir;
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);
  const char* layout = GENERATE("NN", "TN");
  auto summary = tuner.run(request(*catalog, square_gemm(48, layout), {"gemm_clblast"}, 2));
  REQUIRE(summary.ok());
  REQUIRE(summary->outcomes.size() == 2);
  for (const auto& o : summary->outcomes) {
    INFO(o.reason);
    CHECK(o.status == CandidateStatus::kWrongResult);
    CHECK_THAT(o.reason, Catch::Contains("template gemm_clblast config " + o.config) &&
                             Catch::Contains("first bad index"));
  }
  CHECK_FALSE(summary->winner);
}

TEST_CASE("a missing library is unavailable, not an error", "[library][opencl]") {
  test::ScopedEnv missing("KFORGE_CLBLAST_LIBRARY", "/nonexistent/libclblast.so.1");
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* clblast = catalog->find("gemm_clblast");
  REQUIRE(clblast);
  CHECK_THAT(clblast->library_unavailable,
             Catch::Contains("unavailable") && Catch::Contains("/nonexistent/libclblast.so.1"));
  test::TempDir dir;
  auto device = open_device("opencl:0");
  REQUIRE(device.ok());
  auto db = Database::open(dir.file("t.db"), Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator gemm;
  Tuner tuner(**device, **db, gemm);
  auto summary = tuner.run(request(*catalog, square_gemm(32, "NN"), {"gemm_clblast", "gemm_simt_tiled"}, 1));
  REQUIRE(summary.ok());
  REQUIRE(summary->winner);
  CHECK(summary->winner->template_name == "gemm_simt_tiled");
  bool noted = false;
  for (const auto& [name, reason] : summary->search.skipped_templates)
    noted = noted || (name == "gemm_clblast" && reason.find("unavailable") != std::string::npos);
  CHECK(noted);
}
