// Database records, results, winners and filters on a healthy current-version file.
#include "db/database.hpp"

#include <catch2/catch.hpp>
#include <regex>

#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

namespace kforge {
namespace {

using test::make_result;
using test::sample_device;
using test::sample_problem;
using test::sample_template;
using test::seed;
using test::TempDir;

std::unique_ptr<Database> open_rw(const std::string& path) {
  auto db = Database::open(path, Database::Mode::kReadWrite);
  INFO((db ? std::string() : db.error().message));
  REQUIRE(db.ok());
  return std::move(db).value();
}

std::unique_ptr<Database> open_ro(const std::string& path) {
  auto db = Database::open(path, Database::Mode::kReadOnly);
  INFO((db ? std::string() : db.error().message));
  REQUIRE(db.ok());
  return std::move(db).value();
}

const WinnerRecord* find_winner(const std::vector<WinnerRecord>& ws, const std::string& hash) {
  for (const auto& w : ws) {
    if (w.template_hash == hash) return &w;
  }
  return nullptr;
}

TEST_CASE("every record type round-trips with every field", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  auto db = open_rw(path);

  const DeviceRecord dev = sample_device("dev-key-1");
  const TemplateRecord tpl = sample_template("gemm_mma", "abc123", "gemm");
  const ProblemRecord prob = sample_problem("gemm_f16_tn_128x64x32", "gemm", "f16", "tn");
  const std::int64_t dev_id = db->put_device(dev).value();
  const std::int64_t tpl_id = db->put_template(tpl).value();
  const std::int64_t prob_id = db->put_problem(prob).value();

  SweepRecord sweep;
  sweep.tool_version = "0.1.0";
  sweep.git_revision = "0123456789ab-dirty";
  sweep.command_line = "kforge tune --op gemm 'quoted; DROP TABLE results;--'";
  sweep.settings_json = R"({"strategy":"random","budget":100,"seed":7})";
  sweep.device_json = R"({"driver":"550.54","compiler":"nvcc 12.4"})";
  sweep.host = "node-17";
  sweep.started_at = "2024-05-01T12:00:00Z";
  const std::int64_t sweep_id = db->begin_sweep(sweep).value();

  ResultRecord r;
  r.sweep_id = sweep_id;
  r.device_id = dev_id;
  r.template_id = tpl_id;
  r.problem_id = prob_id;
  r.config = "BK16BM64BN128";
  r.status = "ok";
  r.reason = "it's \"fine\"";
  r.median_ms = 0.123456789012345;
  r.p20_ms = 0.11;
  r.p80_ms = 0.14;
  r.min_ms = 0.1;
  r.max_ms = 0.2;
  r.count = 42;
  r.samples_json = "[0.1,0.123456789012345,0.2]";
  r.error_norm = 1.5e-7;
  r.error_ratio = 0.25;
  r.compile_ms = 812.5;
  r.resources_json = R"({"registers":128,"shared_bytes":16384})";
  r.compile_log = "line 1\nline 2 with \xC3\xA9\n";
  r.created_at = "2024-05-01T12:00:01Z";
  REQUIRE(db->add_result(r).value());

  SECTION("devices") {
    auto devs = db->devices().value();
    REQUIRE(devs.size() == 1);
    CHECK(devs[0].id == dev_id);
    CHECK(devs[0].key == dev.key);
    CHECK(devs[0].backend == dev.backend);
    CHECK(devs[0].vendor == dev.vendor);
    CHECK(devs[0].name == dev.name);
    CHECK(devs[0].arch == dev.arch);
    CHECK(devs[0].info_json == dev.info_json);
  }
  SECTION("templates") {
    auto tpls = db->templates().value();
    REQUIRE(tpls.size() == 1);
    CHECK(tpls[0].id == tpl_id);
    CHECK(tpls[0].name == tpl.name);
    CHECK(tpls[0].op == tpl.op);
    CHECK(tpls[0].hash == tpl.hash);
    CHECK(tpls[0].manifest_json == tpl.manifest_json);
  }
  SECTION("problems") {
    auto probs = db->problems().value();
    REQUIRE(probs.size() == 1);
    CHECK(probs[0].id == prob_id);
    CHECK(probs[0].key == prob.key);
    CHECK(probs[0].op == prob.op);
    CHECK(probs[0].dims_json == prob.dims_json);
    CHECK(probs[0].dtype == prob.dtype);
    CHECK(probs[0].layout == prob.layout);
  }
  SECTION("sweeps, before and after finish") {
    auto sweeps = db->sweeps().value();
    REQUIRE(sweeps.size() == 1);
    const SweepRecord& s = sweeps[0];
    CHECK(s.id == sweep_id);
    CHECK(s.tool_version == sweep.tool_version);
    CHECK(s.git_revision == sweep.git_revision);
    CHECK(s.command_line == sweep.command_line);
    CHECK(s.settings_json == sweep.settings_json);
    CHECK(s.device_json == sweep.device_json);
    CHECK(s.host == sweep.host);
    CHECK(s.started_at == sweep.started_at);
    CHECK(s.finished_at.empty());

    REQUIRE(db->finish_sweep(sweep_id, "2024-05-01T13:00:00Z").ok());
    CHECK(db->sweeps().value().at(0).finished_at == "2024-05-01T13:00:00Z");
    auto missing = db->finish_sweep(sweep_id + 100, "2024-05-01T13:00:00Z");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::kNotFound);
  }
  SECTION("results, with joined names") {
    auto rs = db->results().value();
    REQUIRE(rs.size() == 1);
    const ResultRecord& g = rs[0];
    CHECK(g.id > 0);
    CHECK(g.sweep_id == r.sweep_id);
    CHECK(g.device_id == r.device_id);
    CHECK(g.template_id == r.template_id);
    CHECK(g.problem_id == r.problem_id);
    CHECK(g.config == r.config);
    CHECK(g.status == r.status);
    CHECK(g.reason == r.reason);
    CHECK(g.median_ms == r.median_ms);
    CHECK(g.p20_ms == r.p20_ms);
    CHECK(g.p80_ms == r.p80_ms);
    CHECK(g.min_ms == r.min_ms);
    CHECK(g.max_ms == r.max_ms);
    CHECK(g.count == r.count);
    CHECK(g.samples_json == r.samples_json);
    CHECK(g.error_norm == r.error_norm);
    CHECK(g.error_ratio == r.error_ratio);
    CHECK(g.compile_ms == r.compile_ms);
    CHECK(g.resources_json == r.resources_json);
    CHECK(g.compile_log == r.compile_log);
    CHECK(g.created_at == r.created_at);
    CHECK(g.template_name == tpl.name);
    CHECK(g.template_hash == tpl.hash);
    CHECK(g.problem_key == prob.key);
    CHECK(g.device_key == dev.key);
  }
  SECTION("winners, with joined names") {
    auto ws = db->winners().value();
    REQUIRE(ws.size() == 1);
    const WinnerRecord& w = ws[0];
    CHECK(w.device_key == dev.key);
    CHECK(w.problem_key == prob.key);
    CHECK(w.op == prob.op);
    CHECK(w.dims_json == prob.dims_json);
    CHECK(w.dtype == prob.dtype);
    CHECK(w.layout == prob.layout);
    CHECK(w.template_name == tpl.name);
    CHECK(w.template_hash == tpl.hash);
    CHECK(w.config == r.config);
    CHECK(w.median_ms == r.median_ms);
    CHECK(w.result_id == db->results().value().at(0).id);
  }
  SECTION("defaults: created_at is stamped, sweep 0 means no sweep") {
    ResultRecord bare = make_result({0, dev_id, tpl_id, prob_id}, "BM32", "compile_error", 0);
    REQUIRE(db->add_result(bare).value());
    auto rs = db->results().value();
    REQUIRE(rs.size() == 2);
    CHECK(rs[1].sweep_id == 0);
    CHECK(std::regex_match(rs[1].created_at,
                           std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  }
  CHECK(db->schema_version() == kSchemaVersion);
}

TEST_CASE("put_* is idempotent and keeps the first record", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));

  const std::int64_t d1 = db->put_device(sample_device("dev-a")).value();
  DeviceRecord changed = sample_device("dev-a");
  changed.name = "renamed";
  CHECK(db->put_device(changed).value() == d1);
  CHECK(db->put_device(sample_device("dev-b")).value() != d1);
  auto devs = db->devices().value();
  REQUIRE(devs.size() == 2);
  CHECK(devs[0].name == sample_device("dev-a").name);

  const std::int64_t t1 = db->put_template(sample_template("gemm_simt", "h1")).value();
  CHECK(db->put_template(sample_template("gemm_simt", "h1")).value() == t1);
  const std::int64_t t2 = db->put_template(sample_template("gemm_simt", "h2")).value();
  CHECK(t2 != t1);
  CHECK(db->put_template(sample_template("gemm_mma", "h1")).value() != t1);
  CHECK(db->templates().value().size() == 3);

  const std::int64_t p1 = db->put_problem(sample_problem("p1")).value();
  CHECK(db->put_problem(sample_problem("p1")).value() == p1);
  CHECK(db->put_problem(sample_problem("p2")).value() != p1);
  CHECK(db->problems().value().size() == 2);

  auto empty = db->put_device(sample_device(""));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == ErrorCode::kBadInput);
}

TEST_CASE("a duplicate result is ignored and reported", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  const auto ids = seed(*db);

  CHECK(db->add_result(make_result(ids, "BM64", "ok", 1.0)).value() == true);
  CHECK(db->add_result(make_result(ids, "BM64", "ok", 0.5)).value() == false);
  CHECK(db->add_result(make_result(ids, "BM64", "crash", 0.0)).value() == false);

  auto rs = db->results().value();
  REQUIRE(rs.size() == 1);
  CHECK(rs[0].median_ms == 1.0);
  CHECK(rs[0].status == "ok");
  auto ws = db->winners().value();
  REQUIRE(ws.size() == 1);
  CHECK(ws[0].median_ms == 1.0);
  CHECK(db->stored_configs(ids.device, ids.tmpl, ids.problem).value() ==
        std::set<std::string>{"BM64"});
}

TEST_CASE("a rerun's result replaces the stored one and the winner is chosen again", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  const auto ids = seed(*db);
  REQUIRE(db->add_result(make_result(ids, "A", "ok", 1.0)).value());
  REQUIRE(db->add_result(make_result(ids, "B", "wrong_result", 0.0)).value());
  CHECK(db->winners().value().at(0).config == "A");

  // `tune --config B` again: now ok and faster, in the same row.
  REQUIRE(db->replace_result(make_result(ids, "B", "ok", 0.5)).ok());
  auto rs = db->results().value();
  REQUIRE(rs.size() == 2);
  CHECK(db->winners().value().at(0).config == "B");
  // `tune --config B` once more, failing: the winner goes back to A.
  REQUIRE(db->replace_result(make_result(ids, "B", "crash", 0.0)).ok());
  rs = db->results().value();
  REQUIRE(rs.size() == 2);
  for (const auto& r : rs) CHECK(r.status == (r.config == "B" ? "crash" : "ok"));
  CHECK(db->winners().value().at(0).config == "A");
  // A configuration never stored is added.
  REQUIRE(db->replace_result(make_result(ids, "C", "ok", 2.0)).ok());
  CHECK(db->results().value().size() == 3);
}

TEST_CASE("the winner is the fastest ok result", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  const auto ids = seed(*db);

  SECTION("failed results alone make no winner") {
    REQUIRE(db->add_result(make_result(ids, "BM16", "compile_error", 0.0)).value());
    REQUIRE(db->add_result(make_result(ids, "BM32", "wrong_result", 0.01)).value());
    CHECK(db->winners().value().empty());
  }
  SECTION("failed results never win, however fast") {
    REQUIRE(db->add_result(make_result(ids, "A", "ok", 2.0)).value());
    REQUIRE(db->add_result(make_result(ids, "B", "wrong_result", 0.1)).value());
    REQUIRE(db->add_result(make_result(ids, "C", "ok", 1.0)).value());
    REQUIRE(db->add_result(make_result(ids, "D", "ok", 3.0)).value());
    REQUIRE(db->add_result(make_result(ids, "E", "timeout", 0.0)).value());
    auto ws = db->winners().value();
    REQUIRE(ws.size() == 1);
    CHECK(ws[0].config == "C");
    CHECK(ws[0].median_ms == 1.0);
    std::int64_t c_id = 0;
    const auto all = db->results().value();
    for (const auto& r : all) {
      if (r.config == "C") c_id = r.id;
    }
    CHECK(ws[0].result_id == c_id);
  }
  SECTION("a faster result replaces the winner, a slower one does not") {
    REQUIRE(db->add_result(make_result(ids, "A", "ok", 2.0)).value());
    CHECK(db->winners().value().at(0).config == "A");
    REQUIRE(db->add_result(make_result(ids, "B", "ok", 1.5)).value());
    CHECK(db->winners().value().at(0).config == "B");
    REQUIRE(db->add_result(make_result(ids, "C", "ok", 1.7)).value());
    CHECK(db->winners().value().at(0).config == "B");
    CHECK(db->winners().value().size() == 1);
  }
}

TEST_CASE("winners of different template versions are kept apart", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  const auto v1 = seed(*db, "dev-a", "hash-old");
  const auto v2 = seed(*db, "dev-a", "hash-new");
  REQUIRE(v1.tmpl != v2.tmpl);
  REQUIRE(v1.problem == v2.problem);

  REQUIRE(db->add_result(make_result(v1, "BM64", "ok", 1.0)).value());
  REQUIRE(db->add_result(make_result(v1, "BM128", "ok", 0.8)).value());
  // The same config under the new hash is a new result, not a duplicate.
  REQUIRE(db->add_result(make_result(v2, "BM64", "ok", 0.9)).value());
  REQUIRE(db->add_result(make_result(v2, "BM128", "ok", 1.2)).value());

  auto ws = db->winners().value();
  REQUIRE(ws.size() == 2);
  CHECK(ws[0].median_ms <= ws[1].median_ms);  // ordered by median_ms
  const WinnerRecord* old_w = find_winner(ws, "hash-old");
  const WinnerRecord* new_w = find_winner(ws, "hash-new");
  REQUIRE(old_w);
  REQUIRE(new_w);
  CHECK(old_w->config == "BM128");
  CHECK(old_w->median_ms == 0.8);
  CHECK(new_w->config == "BM64");
  CHECK(new_w->median_ms == 0.9);
  CHECK(db->stored_configs(v2.device, v2.tmpl, v2.problem).value().size() == 2);
}

TEST_CASE("results, winners and stored configs filter", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  test::Ids a = seed(*db, "dev-a");
  test::Ids b = a;
  b.device = db->put_device(sample_device("dev-b")).value();
  test::Ids a_f16 = a;
  a_f16.problem = db->put_problem(sample_problem("gemm_f16_tn", "gemm", "f16", "tn")).value();
  test::Ids a_conv = a;
  a_conv.problem = db->put_problem(sample_problem("conv_f32", "conv", "f32", "nhwc")).value();
  a_conv.tmpl = db->put_template(sample_template("conv_direct", "c1", "conv")).value();

  REQUIRE(db->add_result(make_result(a, "X", "ok", 1.0)).value());
  REQUIRE(db->add_result(make_result(a, "Y", "crash", 0.0)).value());
  REQUIRE(db->add_result(make_result(b, "X", "ok", 2.0)).value());
  REQUIRE(db->add_result(make_result(a_f16, "X", "ok", 3.0)).value());
  REQUIRE(db->add_result(make_result(a_conv, "Z", "ok", 4.0)).value());

  using RF = Database::ResultFilter;
  auto count = [&](const RF& f) { return db->results(f).value().size(); };
  CHECK(count({}) == 5);
  CHECK(count({"dev-a", {}, {}}) == 4);
  CHECK(count({"dev-b", {}, {}}) == 1);
  CHECK(count({{}, "gemm_f16_tn", {}}) == 1);
  CHECK(count({{}, {}, "conv_direct"}) == 1);
  CHECK(count({{}, {}, "gemm_simt"}) == 4);
  CHECK(count({"dev-a", sample_problem().key, "gemm_simt"}) == 2);
  CHECK(count({"dev-c", {}, {}}) == 0);
  const auto on_b = db->results({"dev-b", {}, {}}).value();
  for (const auto& r : on_b) CHECK(r.device_key == "dev-b");

  using WF = Database::WinnerFilter;
  auto wins = [&](const WF& f) { return db->winners(f).value(); };
  CHECK(wins({}).size() == 4);
  CHECK(wins({"dev-a", {}, {}, {}, {}}).size() == 3);
  CHECK(wins({{}, "conv", {}, {}, {}}).size() == 1);
  CHECK(wins({{}, "gemm", "f32", {}, {}}).size() == 2);
  CHECK(wins({{}, "gemm", "f32", "nn", {}}).size() == 2);
  CHECK(wins({{}, {}, {}, "tn", {}}).size() == 1);
  CHECK(wins({"dev-b", "gemm", "f32", "nn", sample_problem().key}).size() == 1);
  CHECK(wins({"dev-b", "conv", {}, {}, {}}).empty());
  auto f16 = wins({{}, {}, "f16", {}, {}});
  REQUIRE(f16.size() == 1);
  CHECK(f16[0].problem_key == "gemm_f16_tn");

  CHECK(db->stored_configs(a.device, a.tmpl, a.problem).value() ==
        std::set<std::string>{"X", "Y"});
  CHECK(db->stored_configs(b.device, b.tmpl, b.problem).value() == std::set<std::string>{"X"});
  CHECK(db->stored_configs(b.device, a_conv.tmpl, a_conv.problem).value().empty());
}

TEST_CASE("a result naming unknown ids is rejected and rolled back", "[db]") {
  TempDir dir;
  auto db = open_rw(dir.file("kforge.db"));
  auto ids = seed(*db);
  ids.device += 100;
  auto r = db->add_result(make_result(ids, "X"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::kDatabase);
  CHECK(r.error().message.find("kforge.db: ") != std::string::npos);
  CHECK(db->results().value().empty());
  // The connection is usable afterwards: no transaction left open.
  ids.device -= 100;
  CHECK(db->add_result(make_result(ids, "X")).value());
}

TEST_CASE("two connections in one process writing alternately lose nothing", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  auto a = open_rw(path);
  auto b = open_rw(path);
  const auto ids_a = seed(*a);
  const auto ids_b = seed(*b);
  CHECK(ids_a.device == ids_b.device);
  CHECK(ids_a.tmpl == ids_b.tmpl);
  CHECK(ids_a.problem == ids_b.problem);

  constexpr int kEach = 50;
  for (int i = 0; i < kEach; ++i) {
    std::string config_a = "a", config_b = "b";  // (GCC 12 -Wrestrict false positive on "a" + s)
    config_a += std::to_string(i);
    config_b += std::to_string(i);
    REQUIRE(a->add_result(make_result(ids_a, config_a, "ok", 10.0 + i)).value());
    REQUIRE(b->add_result(make_result(ids_b, config_b, "ok", 5.0 + i)).value());
  }
  CHECK(a->results().value().size() == 2 * kEach);
  CHECK(b->results().value().size() == 2 * kEach);
  CHECK(a->stored_configs(ids_a.device, ids_a.tmpl, ids_a.problem).value().size() == 2 * kEach);
  auto ws = a->winners().value();
  REQUIRE(ws.size() == 1);
  CHECK(ws[0].config == "b0");
  CHECK(b->sweeps().value().size() == 2);
}

TEST_CASE("a read-only database cannot be written", "[db]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  test::Ids ids;
  {
    auto db = open_rw(path);
    ids = seed(*db);
    REQUIRE(db->add_result(make_result(ids, "X", "ok", 1.0)).value());
  }
  auto writer = open_rw(path);  // readers and a writer coexist (WAL)
  auto ro = open_ro(path);
  CHECK(ro->schema_version() == kSchemaVersion);
  CHECK(ro->results().value().size() == 1);
  CHECK(ro->winners().value().size() == 1);

  auto added = ro->add_result(make_result(ids, "Y", "ok", 0.5));
  REQUIRE_FALSE(added.ok());
  CHECK(added.error().code == ErrorCode::kDatabase);
  CHECK(added.error().message.find(path) == 0);
  CHECK_FALSE(ro->put_device(sample_device("dev-z")).ok());
  CHECK_FALSE(ro->begin_sweep(SweepRecord{}).ok());
  CHECK(ro->results().value().size() == 1);

  REQUIRE(writer->add_result(make_result(ids, "Z", "ok", 0.25)).value());
  CHECK(ro->results().value().size() == 2);
  CHECK(ro->winners().value().at(0).config == "Z");
}

}  // namespace
}  // namespace kforge
