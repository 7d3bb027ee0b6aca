// The device_ceilings table (schema version 5): a device's measured peaks
// stored, replaced by a newer measurement, read back, and bad values refused
// with a message that names them.
#include <catch2/catch.hpp>

#include "db/database.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

MeasuredCeilingRecord ceiling(const std::string& device, const std::string& name, double value) {
  return {device, name, value, name == "copy_bandwidth" ? "GB/s" : "GFLOP/s", "probe", "0.test", ""};
}

}  // namespace

TEST_CASE("measured ceilings are stored per device and name, the newest kept", "[db][ceilings]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  seed(*db, "dev-a");
  seed(*db, "dev-b");
  REQUIRE(db->put_measured_ceiling(ceiling("dev-a", "copy_bandwidth", 30.5)).ok());
  REQUIRE(db->put_measured_ceiling(ceiling("dev-a", "fp32_fma", 150)).ok());
  REQUIRE(db->put_measured_ceiling(ceiling("dev-b", "copy_bandwidth", 4000)).ok());
  REQUIRE(db->put_measured_ceiling(ceiling("dev-a", "copy_bandwidth", 31.25)).ok());  // re-measured

  const auto all = db->measured_ceilings().value();
  REQUIRE(all.size() == 3);
  CHECK(all[0].device_key == "dev-a");
  CHECK(all[0].name == "copy_bandwidth");
  CHECK(all[0].value == 31.25);
  CHECK(all[0].unit == "GB/s");
  CHECK(all[0].method == "probe");
  CHECK(all[0].tool_version == "0.test");
  CHECK(all[0].created_at.size() == 20);  // 2024-05-01T12:34:56Z
  CHECK(all[1].name == "fp32_fma");
  CHECK(all[2].device_key == "dev-b");
}

TEST_CASE("a bad measured ceiling is refused and nothing stored is lost", "[db][ceilings]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  seed(*db, "dev-a");
  REQUIRE(db->put_measured_ceiling(ceiling("dev-a", "copy_bandwidth", 30)).ok());
  auto bad = db->put_measured_ceiling(ceiling("dev-a", "copy_bandwidth", -1));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kBadInput);
  CHECK(bad.error().message.find("copy_bandwidth value -1 is not a positive number") != std::string::npos);
  bad = db->put_measured_ceiling(ceiling("dev-a", "fp64_peak", 3));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("name 'fp64_peak' is not copy_bandwidth or fp32_fma") != std::string::npos);
  bad = db->put_measured_ceiling(ceiling("dev-z", "fp32_fma", 3));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == ErrorCode::kNotFound);
  CHECK(bad.error().message.find("no device 'dev-z'") != std::string::npos);
  const auto all = db->measured_ceilings().value();
  REQUIRE(all.size() == 1);
  CHECK(all[0].value == 30);
}

TEST_CASE("a measured ceiling's text that is not UTF-8 reads back as stored", "[db][ceilings]") {
  TempDir dir;
  auto db = Database::open(dir.file("kforge.db"), Database::Mode::kReadWrite).value();
  seed(*db, "dev-a");
  auto c = ceiling("dev-a", "fp32_fma", 150);
  c.method = "probe \xff\xfe";
  REQUIRE(db->put_measured_ceiling(c).ok());
  const auto all = db->measured_ceilings();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 1);
  CHECK(all->at(0).method == "probe \xff\xfe");
  CHECK(all->at(0).value == 150);
}

TEST_CASE("a stored ceiling value that is not a number is an error naming it", "[db][ceilings]") {
  TempDir dir;
  const std::string path = dir.file("kforge.db");
  auto db = Database::open(path, Database::Mode::kReadWrite).value();
  seed(*db, "dev-a");
  REQUIRE(db->put_measured_ceiling(ceiling("dev-a", "fp32_fma", 150)).ok());
  raw_exec(path, "UPDATE device_ceilings SET value = 'fast'");
  const auto all = db->measured_ceilings();
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().code == ErrorCode::kBadInput);
  CHECK(all.error().message.find("fp32_fma of device dev-a holds no number: 'fast'") != std::string::npos);
}
