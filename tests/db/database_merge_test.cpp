// Database::merge_from: shards of a sweep merge without loss, by natural keys,
// idempotently, with winners recomputed; bad sources leave the target alone.
#include <catch2/catch.hpp>
#include <map>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

namespace kforge {
namespace {

using test::make_result;
using test::raw_exec;
using test::raw_text;
using test::read_file;
using test::sample_device;
using test::sample_problem;
using test::sample_template;
using test::TempDir;
using test::write_file;
using Mode = Database::Mode;

std::unique_ptr<Database> open_rw(const std::string& path) {
  auto db = Database::open(path, Mode::kReadWrite);
  INFO((db.ok() ? "" : db.error().message));
  REQUIRE(db.ok());
  return std::move(*db);
}

/// Every result by (device key, template hash, problem key, config).
std::map<std::string, ResultRecord> by_key(Database& db) {
  std::map<std::string, ResultRecord> out;
  const auto rows = db.results().value();
  for (const auto& r : rows) {
    out[r.device_key + "|" + r.template_hash + "|" + r.problem_key + "|" + r.config] = r;
  }
  return out;
}

/// A result with every field set to something distinctive.
ResultRecord full_result(const test::Ids& ids, const std::string& config, double median) {
  ResultRecord r = make_result(ids, config, "ok", median);
  r.error_norm = 1e-7 * median;
  r.error_ratio = 0.01 * median;
  r.compile_ms = 3.5 * median;
  r.resources_json = R"({"registers":)" + std::to_string(static_cast<int>(median)) + "}";
  r.compile_log = "log of " + config;
  r.created_at = "2024-05-0" + std::to_string(1 + static_cast<int>(median) % 9) + "T10:00:00Z";
  return r;
}

/// A sweep of its own (seed's sweeps all have the same content).
std::int64_t distinct_sweep(Database& db, const std::string& host) {
  SweepRecord s;
  s.tool_version = "0.1.0";
  s.host = host;
  s.command_line = "kforge tune --shard " + host;
  s.started_at = "2024-06-01T00:00:00Z";
  return db.begin_sweep(s).value();
}

}  // namespace

TEST_CASE("two shards merge into a third without losing anything", "[db][merge]") {
  TempDir dir;
  const std::string a_path = dir.file("a.db"), b_path = dir.file("b.db"), c_path = dir.file("c.db");
  {
    // Shard a: device a, template v1, one sweep. Shard b: the same device and
    // template plus a second device and a second problem, its own sweep, and
    // created in another order so that every id differs from a's.
    auto a = open_rw(a_path);
    auto ia = test::seed(*a, "dev-a");
    ia.sweep = distinct_sweep(*a, "host-a");
    for (int i = 0; i < 5; ++i) {
      REQUIRE(a->add_result(full_result(ia, "BM" + std::to_string(i), 5.0 + i)).value());
    }
    auto failed = make_result(ia, "BM99", "compile_error", 0.0);
    REQUIRE(a->add_result(failed).value());

    auto b = open_rw(b_path);
    const auto other_problem = b->put_problem(sample_problem("gemm/M=8", "gemm")).value();
    test::Ids ib = test::seed(*b, "dev-b");
    ib.problem = other_problem;
    ib.sweep = distinct_sweep(*b, "host-b1");
    for (int i = 0; i < 3; ++i) {
      REQUIRE(b->add_result(full_result(ib, "BM" + std::to_string(i), 2.0 + i)).value());
    }
    test::Ids ib_a = test::seed(*b, "dev-a");  // same device and problem as shard a
    ib_a.sweep = distinct_sweep(*b, "host-b2");
    REQUIRE(b->add_result(full_result(ib_a, "BM7", 1.0)).value());  // faster than a's best
  }

  auto c = open_rw(c_path);
  auto first = c->merge_from(a_path);
  INFO((first.ok() ? "" : first.error().message));
  REQUIRE(first.ok());
  CHECK(first->devices == 1);
  CHECK(first->templates == 1);
  CHECK(first->problems == 1);
  CHECK(first->sweeps == 2);  // seed's and host-a's
  CHECK(first->results == 6);
  CHECK(first->duplicate_results == 0);
  CHECK(first->winners_changed == 1);

  auto second = c->merge_from(b_path);
  REQUIRE(second.ok());
  CHECK(second->devices == 1);    // dev-b
  CHECK(second->templates == 0);  // the same template version
  CHECK(second->problems == 1);   // gemm/M=8
  CHECK(second->sweeps == 2);     // host-b1, host-b2 (seed's is a's, by content)
  CHECK(second->results == 4);
  CHECK(second->winners_changed == 2);  // dev-b's new triple, and dev-a's faster BM7

  // Every field of every result survives, keyed by names, not ids.
  auto a = Database::open(a_path, Mode::kReadOnly).value();
  auto b = Database::open(b_path, Mode::kReadOnly).value();
  auto merged = by_key(*c);
  REQUIRE(merged.size() == 10);
  for (Database* shard : {a.get(), b.get()}) {
    for (const auto& [key, r] : by_key(*shard)) {
      INFO(key);
      REQUIRE(merged.count(key) == 1);
      const ResultRecord& m = merged.at(key);
      CHECK(m.status == r.status);
      CHECK(m.reason == r.reason);
      CHECK(m.median_ms == r.median_ms);
      CHECK(m.p20_ms == r.p20_ms);
      CHECK(m.p80_ms == r.p80_ms);
      CHECK(m.min_ms == r.min_ms);
      CHECK(m.max_ms == r.max_ms);
      CHECK(m.count == r.count);
      CHECK(m.samples_json == r.samples_json);
      CHECK(m.error_norm == r.error_norm);
      CHECK(m.error_ratio == r.error_ratio);
      CHECK(m.compile_ms == r.compile_ms);
      CHECK(m.resources_json == r.resources_json);
      CHECK(m.compile_log == r.compile_log);
      CHECK(m.created_at == r.created_at);
      CHECK((m.sweep_id == 0) == (r.sweep_id == 0));
    }
  }
  // Winners: dev-a's is now b's BM7; dev-b's is its fastest.
  auto winners = c->winners().value();
  REQUIRE(winners.size() == 2);
  std::map<std::string, std::string> winner_of;
  for (const auto& w : winners) winner_of[w.device_key] = w.config;
  CHECK(winner_of["dev-a"] == "BM7");
  CHECK(winner_of["dev-b"] == "BM0");
  // Results still point at sweeps with their original content.
  auto sweeps = c->sweeps().value();
  CHECK(sweeps.size() == 4);
  const auto rows = c->results().value();
  for (const auto& r : rows) {
    bool found = false;
    for (const auto& s : sweeps) found = found || s.id == r.sweep_id;
    CHECK(found);
  }
  CHECK(c->verify().value().findings.empty());
}

TEST_CASE("merging the same file twice adds nothing", "[db][merge]") {
  TempDir dir;
  const std::string src = dir.file("src.db"), dst = dir.file("dst.db");
  {
    auto s = open_rw(src);
    const auto ids = test::seed(*s);
    for (int i = 0; i < 4; ++i) REQUIRE(s->add_result(make_result(ids, "C" + std::to_string(i))).value());
  }
  auto d = open_rw(dst);
  REQUIRE(d->merge_from(src).ok());
  auto again = d->merge_from(src);
  REQUIRE(again.ok());
  CHECK(again->devices + again->templates + again->problems + again->sweeps + again->results == 0);
  CHECK(again->duplicate_results == 4);
  CHECK(again->winners_changed == 0);
  CHECK(d->results().value().size() == 4);
  CHECK(d->sweeps().value().size() == 1);
}

TEST_CASE("a result already stored keeps its row when merged", "[db][merge]") {
  TempDir dir;
  const std::string src = dir.file("src.db"), dst = dir.file("dst.db");
  {
    auto s = open_rw(src);
    REQUIRE(s->add_result(make_result(test::seed(*s), "SAME", "ok", 0.5)).value());
  }
  auto d = open_rw(dst);
  REQUIRE(d->add_result(make_result(test::seed(*d), "SAME", "ok", 2.0)).value());
  auto report = d->merge_from(src);
  REQUIRE(report.ok());
  CHECK(report->results == 0);
  CHECK(report->duplicate_results == 1);
  auto rows = d->results().value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].median_ms == 2.0);
}

TEST_CASE("a bad source is refused and the target is left untouched", "[db][merge]") {
  TempDir dir;
  const std::string dst = dir.file("dst.db");
  auto d = open_rw(dst);
  REQUIRE(d->add_result(make_result(test::seed(*d), "KEEP")).value());
  const std::string bad = dir.file("bad.db");
  std::string expected;
  SECTION("missing") { expected = bad + ": no such database"; }
  SECTION("not a database") {
    write_file(bad, "not a database at all, just some text that is long enough\n");
    expected = bad + ": not a SQLite database";
  }
  SECTION("from a newer kforge") {
    { auto s = open_rw(bad); }
    raw_exec(bad, "PRAGMA user_version = 9");
    expected = bad + ": schema version 9 is newer than this kforge supports";
  }
  SECTION("damaged pages") {
    {
      auto s = open_rw(bad);
      const auto ids = test::seed(*s);
      for (int i = 0; i < 300; ++i) {
        std::string config = "X";
        config += std::to_string(i);
        auto r = make_result(ids, config);
        r.compile_log = std::string(300, 'x');
        REQUIRE(s->add_result(r).value());
      }
    }
    std::string bytes = read_file(bad);
    REQUIRE(bytes.size() > 16 * 4096);
    for (std::size_t i = 0; i < 4096; ++i) bytes[bytes.size() / 2 + i] = static_cast<char>(i * 7 + 3);
    write_file(bad, bytes);
    expected = bad + ": database is corrupt";
  }
  SECTION("itself") { expected = dst + ": cannot merge a database into itself"; }

  const std::string source = expected.rfind(dst, 0) == 0 ? dst : bad;
  auto report = d->merge_from(source);
  REQUIRE_FALSE(report.ok());
  INFO(report.error().message);
  CHECK(report.error().code == ErrorCode::kBadInput);
  CHECK(report.error().message.rfind(expected, 0) == 0);
  CHECK(report.error().message.find('\n') == std::string::npos);
  CHECK(d->results().value().size() == 1);
  CHECK(d->add_result(make_result(test::seed(*d), "STILL_USABLE")).value());
  CHECK(raw_text(dst, "SELECT count(*) FROM results") == "2");
}

}  // namespace kforge
