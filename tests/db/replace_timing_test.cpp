// Database::replace_timing: a finalist's re-timing replaces its stored timing
// and its clock record (resources_json "clocks"), and the winner follows.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

json stored_resources(Database& db, const std::string& config) {
  const std::vector<ResultRecord> results = db.results().value();
  for (const auto& r : results) {
    if (r.config == config) return json::parse(r.resources_json);
  }
  FAIL("no result " << config);
  return nullptr;
}

}  // namespace

TEST_CASE("replace_timing replaces timing and clocks, keeps other resources", "[db]") {
  test::TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  const test::Ids ids = test::seed(*db);
  auto a = test::make_result(ids, "BM64", "ok", 2.0);
  a.resources_json = R"({"registers":40,"clocks":{"source":"nvml","core_mhz":[1000,1000]}})";
  REQUIRE(db->add_result(a).value());
  auto b = test::make_result(ids, "BM128", "ok", 1.5);
  b.resources_json = R"({"registers":64,"clocks":{"source":"nvml","core_mhz":[1200]}})";
  REQUIRE(db->add_result(b).value());
  CHECK(db->winners().value().at(0).config == "BM128");

  SECTION("the re-timing's clocks replace the search's") {
    auto re = test::make_result(ids, "BM64", "ok", 1.0);
    re.reason = "finalist re-timed interleaved";
    re.resources_json = R"({"clocks":{"source":"nvml","core_mhz":[1900,1100],"throttled":[false,true]}})";
    REQUIRE(db->replace_timing(re).ok());
    const json r = stored_resources(*db, "BM64");
    CHECK(r["registers"] == 40);
    CHECK(r["clocks"]["core_mhz"] == json::array({1900, 1100}));
    CHECK(r["clocks"]["throttled"] == json::array({false, true}));
    CHECK(db->winners().value().at(0).config == "BM64");
  }
  SECTION("a re-timing without clocks removes the search's") {
    auto re = test::make_result(ids, "BM128", "ok", 1.4);
    REQUIRE(db->replace_timing(re).ok());
    const json r = stored_resources(*db, "BM128");
    CHECK(r == json{{"registers", 64}});
  }
  SECTION("stored resources that are not JSON take the clocks alone") {
    auto c = test::make_result(ids, "BM32", "ok", 3.0);
    REQUIRE(db->add_result(c).value());  // resources_json ''
    auto re = test::make_result(ids, "BM32", "ok", 2.5);
    re.resources_json = R"({"clocks":{"source":"cpufreq"}})";
    REQUIRE(db->replace_timing(re).ok());
    CHECK(stored_resources(*db, "BM32") == json{{"clocks", {{"source", "cpufreq"}}}});
  }
}
