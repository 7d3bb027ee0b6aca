// The counters table (schema version 4): storing and replacing a collector's
// rows beside a result, the checks on bad rows, merge and verify, and the
// migration of a version 3 database that already holds results.
#include <catch2/catch.hpp>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

CounterRecord reading(const std::string& collector, const std::string& name, double value,
                      const std::string& unit) {
  CounterRecord c;
  c.source = collector;
  c.collector = collector;
  c.name = name;
  c.value = value;
  c.unit = unit;
  return c;
}

CounterRecord unavailable(const std::string& collector, const std::string& why) {
  CounterRecord c;
  c.source = "unavailable";
  c.collector = collector;
  c.name = "availability";
  c.note = why;
  return c;
}

/// A database holding one ok result; returns its id.
std::int64_t one_result(Database& db) {
  const Ids ids = seed(db);
  REQUIRE(db.add_result(make_result(ids, "BM64", "ok", 2.0)).value());
  return db.results().value().front().id;
}

}  // namespace

TEST_CASE("a collector's counters are stored beside a result and replaced whole", "[db][counters]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  const std::int64_t id = one_result(*db);
  const ResultRecord before = db->results().value().front();

  REQUIRE(db->replace_counters(id, "ncu",
                               {reading("ncu", "dram__bytes_read.sum", 1.5e9, "byte"),
                                reading("ncu", "lts__t_sector_hit_rate.pct", 61.25, "%")})
              .ok());
  REQUIRE(db->replace_counters(
                id, "perf",
                {unavailable("perf", "unavailable: no CPU PMU (perf_event_open: No such file or directory)")})
              .ok());
  auto rows = db->counters({id}).value();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].collector == "ncu");
  CHECK(rows[0].name == "dram__bytes_read.sum");
  CHECK(rows[0].value == 1.5e9);
  CHECK(rows[0].unit == "byte");
  CHECK(rows[0].counters_version == kCountersVersion);
  CHECK_FALSE(rows[0].created_at.empty());
  CHECK(rows[2].source == "unavailable");
  CHECK_FALSE(rows[2].value.has_value());
  CHECK(rows[2].note.find("perf_event_open: ") != std::string::npos);

  // A new collection by ncu replaces ncu's rows only.
  REQUIRE(db->replace_counters(id, "ncu", {reading("ncu", "dram__bytes_write.sum", 4096, "byte")}).ok());
  rows = db->counters().value();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "dram__bytes_write.sum");
  CHECK(rows[1].collector == "perf");

  // Profiling never touches the stored timing.
  const ResultRecord after = db->results().value().front();
  CHECK(after.median_ms == before.median_ms);
  CHECK(after.samples_json == before.samples_json);
  CHECK(db->verify().value().findings.empty());
  CHECK(db->verify().value().counters == 2);
}

TEST_CASE("bad counter rows are refused naming the field and value", "[db][counters]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  const std::int64_t id = one_result(*db);
  auto refused = [&](const CounterRecord& r) {
    Status st = db->replace_counters(id, "ncu", {r});
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == ErrorCode::kBadInput);
    return st.error().message;
  };
  CounterRecord bad = reading("ncu", "x", 1, "");
  bad.source = "guess";
  CHECK(refused(bad).find("source 'guess' is not one of") != std::string::npos);
  bad = reading("ncu", "x", 1, "");
  bad.value.reset();
  CHECK(refused(bad).find("row 0 (x): value is missing") != std::string::npos);
  CHECK(refused(unavailable("ncu", "")).find("needs a note") != std::string::npos);
  CHECK(refused(reading("perf", "cycles", 1, "")).find("collector 'perf' is not 'ncu'") != std::string::npos);
  CHECK(db->counters().value().empty());

  Status missing = db->replace_counters(id + 100, "ncu", {reading("ncu", "x", 1, "")});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);
}

TEST_CASE("merge carries counters with their results, once", "[db][counters][merge]") {
  TempDir dir;
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  {
    auto src = Database::open(b, Database::Mode::kReadWrite).value();
    const std::int64_t id = one_result(*src);
    REQUIRE(src->replace_counters(id, "ncu", {reading("ncu", "dram__bytes_read.sum", 7, "byte")}).ok());
  }
  auto dst = Database::open(a, Database::Mode::kReadWrite).value();
  CHECK(dst->merge_from(b).value().counters == 1);
  CHECK(dst->merge_from(b).value().counters == 0);
  const auto rows = dst->counters().value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].result_id == dst->results().value().front().id);
  CHECK(rows[0].value == 7);
}

TEST_CASE("verify names a counter row replace_counters would refuse", "[db][counters]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  const std::int64_t id = one_result(*db);
  raw_exec(
      path,
      "INSERT INTO counters (result_id, source, collector, name, counters_version, created_at) VALUES (" +
          std::to_string(id) + ", 'ncu', 'ncu', 'dram__bytes_read.sum', 1, 'now')");
  const auto findings = db->verify().value().findings;
  REQUIRE(findings.size() == 1);
  CHECK(findings[0] ==
        "counters: row 1 of result " + std::to_string(id) + " (dram__bytes_read.sum) has no value");
}

TEST_CASE("a version 3 database migrates to the current version with its rows intact", "[db][counters][migrate]") {
  TempDir dir;
  const std::string path = dir.file("v3.db");
  raw_exec(path, read_file(KFORGE_SOURCE_DIR "/tests/data/databases/kforge_v3.sql"));
  REQUIRE(raw_text(path, "PRAGMA user_version") == "3");
  {
    auto ro = Database::open(path, Database::Mode::kReadOnly);
    REQUIRE_FALSE(ro.ok());
    CHECK(ro.error().message.find("schema version 3 is older than " + std::to_string(kSchemaVersion)) != std::string::npos);
  }
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  CHECK(db->schema_version() == kSchemaVersion);
  const auto results = db->results().value();
  REQUIRE(results.size() == 3);
  CHECK(results[1].config == "BM64");
  CHECK(results[1].median_ms == Approx(0.20));
  CHECK(results[2].compile_log == "error: too large");
  const auto winners = db->winners().value();
  REQUIRE(winners.size() == 1);
  CHECK(winners[0].result_id == 2);
  CHECK(db->counters().value().empty());
  REQUIRE(db->replace_counters(2, "perf", {unavailable("perf", "unavailable: no CPU PMU")}).ok());
  const auto report = db->verify().value();
  CHECK(report.findings.empty());
  CHECK(report.results == 3);
  CHECK(report.counters == 1);
}
