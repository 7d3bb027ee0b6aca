// The winner rule distrusts stored rows: a result whose configuration its
// template version's manifest does not declare never holds the winner slot,
// whether it was added, tampered in place, or merged in.
#include <catch2/catch.hpp>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/generator/generator_fixtures.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

constexpr const char* kValid = "BK8_BM32_BN32_TM2_TN2";
constexpr const char* kFaster = "BK8_BM64_BN32_TM2_TN2";
constexpr const char* kUndeclared = "BK8_BM48_BN32_TM2_TN2";  // BM 48 is not declared
constexpr const char* kEvil = "BK8_BM32_BN32_EVIL_TM2_TN2";    // no parameter EVIL

/// seed() with a template version whose stored manifest is a real one.
Ids seed_real(Database& db) {
  Ids ids = seed(db);
  TemplateRecord t = sample_template("gemm_test", "hash-real");
  t.manifest_json = gemm_manifest_json().dump();
  ids.tmpl = db.put_template(t).value();
  return ids;
}

std::string winner_config(Database& db) {
  const auto w = db.winners().value();
  return w.empty() ? std::string("(none)") : w.at(0).config;
}

}  // namespace

TEST_CASE("an undeclared configuration never becomes the winner", "[db][winner]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  const Ids ids = seed_real(*db);
  REQUIRE(db->add_result(make_result(ids, kValid, "ok", 2.0)).value());
  REQUIRE(db->add_result(make_result(ids, kUndeclared, "ok", 0.5)).value());
  REQUIRE(db->add_result(make_result(ids, kEvil, "ok", 0.4)).value());
  CHECK(winner_config(*db) == kValid);
  REQUIRE(db->add_result(make_result(ids, kFaster, "ok", 1.0)).value());
  CHECK(winner_config(*db) == kFaster);
  CHECK(db->verify().value().findings.empty());
}

TEST_CASE("a tampered fastest row loses the winner slot at the next refresh", "[db][winner]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  Ids ids;
  {
    auto db = Database::open(path, Database::Mode::kReadWrite).value();
    ids = seed_real(*db);
    REQUIRE(db->add_result(make_result(ids, kValid, "ok", 2.0)).value());
    REQUIRE(db->add_result(make_result(ids, kFaster, "ok", 1.0)).value());
  }
  // A tamperer rewrites the fastest row's configuration and its winner row.
  raw_exec(path, std::string("UPDATE results SET config = '") + kUndeclared + "', median_ms = 0.1 WHERE config = '" +
                     kFaster + "'; UPDATE winners SET config = '" + kUndeclared + "', median_ms = 0.1;");
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  const auto findings = db->verify().value().findings;
  REQUIRE(findings.size() == 2);
  CHECK_THAT(findings[0], Catch::Contains("the fastest declared ok result is"));
  CHECK_THAT(findings[1], Catch::Contains("which its template does not declare"));

  REQUIRE(db->refresh_winner(ids.device, ids.tmpl, ids.problem).ok());
  CHECK(winner_config(*db) == kValid);
  CHECK(db->verify().value().findings.empty());

  SECTION("with no declared result left, the triple has no winner") {
    raw_exec(path, std::string("UPDATE results SET config = '") + kEvil + "' WHERE config = '" + kValid + "'");
    REQUIRE(db->refresh_winner(ids.device, ids.tmpl, ids.problem).ok());
    CHECK(db->winners().value().empty());
  }
}

TEST_CASE("merging recomputes winners from declared results only", "[db][winner][merge]") {
  TempDir dir;
  const std::string other = dir.file("other.db");
  {
    auto src = Database::open(other, Database::Mode::kReadWrite).value();
    const Ids ids = seed_real(*src);
    REQUIRE(src->add_result(make_result(ids, kValid, "ok", 2.0)).value());
    REQUIRE(src->add_result(make_result(ids, kFaster, "ok", 1.5)).value());
  }
  raw_exec(other, std::string("UPDATE results SET config = '") + kUndeclared + "', median_ms = 0.1 WHERE config = '" +
                      kFaster + "'; UPDATE winners SET config = '" + kUndeclared + "', median_ms = 0.1;");
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  REQUIRE(db->merge_from(other).ok());
  CHECK(winner_config(*db) == kValid);
  CHECK(db->verify().value().findings.empty());
}
