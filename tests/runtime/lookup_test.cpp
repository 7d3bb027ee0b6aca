// The runtime lookup: exact, nearest and default rules, stale and tampered
// entries never selected, launches that compute the right answer.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "device_registry.hpp"
#include "gemm_operator.hpp"
#include "lookup.hpp"
#include "test_util.hpp"
#include "tuner.hpp"

using namespace kforge;

namespace {

const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";

Problem gemm(std::int64_t m, std::int64_t n, std::int64_t k) {
  return Problem{"gemm", {{"M", m}, {"N", n}, {"K", k}, {"batch", 1}}, Dtype::kF32, Layout{}};
}

TemplateCatalog catalog_with(const std::string& dir) {
  auto c = TemplateCatalog::builtin();
  REQUIRE(c.ok());
  REQUIRE(c->add_dir(dir).ok());
  return std::move(*c);
}

/// Tunes the planted template's whole space for `p` into `db_path`.
void tune_into(const std::string& db_path, Device& device, const Problem& p) {
  auto catalog = catalog_with(kPlanted);
  auto db = Database::open(db_path, Database::Mode::kReadWrite);
  REQUIRE(db.ok());
  GemmOperator op;
  Tuner tuner(device, **db, op);
  TuneRequest req;
  req.problem = p;
  req.templates = {catalog.find("gemm_naive_planted")};
  req.strategy = "exhaustive";
  req.protocol.warmup = 0;
  req.protocol.min_reps = req.protocol.max_reps = 2;
  REQUIRE(tuner.run(req).ok());
}

void exec_sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO((err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

/// Launches the selection on fresh data and checks it against the reference.
void check_launch(Lookup& lookup, Device& device, const Selection& sel) {
  GemmOperator op;
  Workload w = op.make_workload(sel.problem, 7, WorkloadKind::kAccumulate);
  Reference ref = op.reference(sel.problem, w);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<KernelArg> args;
  for (const auto& t : w.tensors) {
    bufs.push_back(std::move(device.allocate(t.bytes.size()).value()));
    REQUIRE(device.write(*bufs.back(), t.bytes.data(), t.bytes.size()).ok());
  }
  for (const auto& a : w.args) {
    if (a.kind == OperatorArg::Kind::kTensor) args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32) args.push_back(KernelArg::of(a.i32));
    else args.push_back(KernelArg::of(a.f32));
  }
  REQUIRE(lookup.launch(sel, args).ok());
  std::vector<float> c(w.tensors[w.output].elements());
  REQUIRE(device.read(*bufs[w.output], c.data(), c.size() * 4).ok());
  for (std::size_t i = 0; i < c.size(); ++i) {
    INFO(sel.template_name << " " << sel.config << " index " << i);
    REQUIRE(std::fabs(c[i] - ref.value[i]) <= ref.tolerance * ref.scale[i]);
  }
}

}  // namespace

TEST_CASE("exact, nearest and default rules", "[lookup][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = dir.file("k.db");
  tune_into(db, **device, gemm(33, 17, 9));

  auto lookup = Lookup::open(db, **device, catalog_with(kPlanted));
  REQUIRE(lookup.ok());

  auto exact = (*lookup)->select(gemm(33, 17, 9));
  REQUIRE(exact.ok());
  CHECK(exact->rule == "exact");
  CHECK(exact->template_name == "gemm_naive_planted");
  CHECK_THAT(exact->config, Catch::Contains("FLAW0"));
  CHECK_THAT(exact->explanation, Catch::StartsWith("exact:"));
  check_launch(**lookup, **device, *exact);

  auto near = (*lookup)->select(gemm(40, 20, 9));
  REQUIRE(near.ok());
  CHECK(near->rule == "nearest");
  CHECK(near->tuned_problem == gemm(33, 17, 9).key());
  CHECK(near->distance > 0);
  check_launch(**lookup, **device, *near);

  auto other_layout = (*lookup)->select(Problem{"gemm", {{"M", 33}, {"N", 17}, {"K", 9}}, Dtype::kF32, *parse_layout("TT")});
  REQUIRE(other_layout.ok());
  CHECK(other_layout->rule == "default");
  CHECK(other_layout->template_name == "gemm_simt_tiled");  // built-in before user templates
  check_launch(**lookup, **device, *other_layout);

  auto none = Lookup::open(dir.file("missing.db"), **device, catalog_with(kPlanted));
  REQUIRE(none.ok());
  auto def = (*none)->select(gemm(33, 17, 9));
  REQUIRE(def.ok());
  CHECK(def->rule == "default");
  CHECK_THAT(def->explanation, Catch::Contains("no tuning database"));
  CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
}

TEST_CASE("stale entries are never selected and explain says so", "[lookup][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = dir.file("k.db");
  tune_into(db, **device, gemm(33, 17, 9));

  // The same template, edited after tuning: its hash changes.
  const auto edited = dir.path() / "edited";
  std::filesystem::copy(kPlanted, edited);
  const auto src = (edited / "gemm_naive_planted.c").string();
  test::write_file(src, test::read_file(src) + "\n// edited after tuning\n");

  auto lookup = Lookup::open(db, **device, catalog_with(edited.string()));
  REQUIRE(lookup.ok());
  auto sel = (*lookup)->select(gemm(33, 17, 9));
  REQUIRE(sel.ok());
  CHECK(sel->rule == "default");
  CHECK_THAT(sel->explanation, Catch::Contains("stale"));
}

TEST_CASE("a tampered database entry is rejected before any source is generated", "[lookup][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = dir.file("k.db");
  tune_into(db, **device, gemm(33, 17, 9));

  const std::string tampered = GENERATE(std::string("BX9_BY4_FLAW0"),            // undeclared value
                                        std::string("BX8_BY4_FLAW0_EVIL1"),      // undeclared parameter
                                        std::string("BX8_BY4_FLAW0);\n#error"),  // code through a define
                                        std::string("BX8_BY4"));                 // missing parameter
  exec_sql(db, "UPDATE winners SET config = '" + tampered + "'");
  auto lookup = Lookup::open(db, **device, catalog_with(kPlanted));
  REQUIRE(lookup.ok());
  auto sel = (*lookup)->select(gemm(33, 17, 9));
  REQUIRE(sel.ok());
  INFO(sel->explanation);
  CHECK(sel->rule == "default");
  CHECK(sel->config != tampered);
  CHECK_THAT(sel->explanation, Catch::Contains("skipped invalid entry"));
}

TEST_CASE("select is cached and safe from many threads", "[lookup][opencl]") {
  test::TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = dir.file("k.db");
  tune_into(db, **device, gemm(33, 17, 9));
  auto lookup = Lookup::open(db, **device, catalog_with(kPlanted));
  REQUIRE(lookup.ok());
  std::vector<std::string> got(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto s = (*lookup)->select(gemm(33 + (i % 3), 17, 9));
        if (s.ok() && i == 0) got[t] = s->rule + s->config;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& g : got) CHECK(g == got[0]);
}
