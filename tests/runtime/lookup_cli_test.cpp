// `kforge lookup` with overlay databases (--db USER --system-db SYSTEM),
// explain naming the database of each step, and --prepare through the
// binary cache ($KFORGE_CACHE_DIR).
#include <catch2/catch.hpp>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

json lookup_json(const std::string& args) {
  const test::CommandResult r = test::run_kforge("lookup --json " + args);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

void tune(const std::string& db, const std::string& shape) {
  const test::CommandResult r = test::run_kforge("tune --shape " + shape + " --max-evals 3 --min-reps 2 " +
                                                 "--max-reps 2 --quiet --db " + db);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

}  // namespace

TEST_CASE("kforge lookup searches --db before --system-db and says where each step came from",
          "[cli][lookup]") {
  test::TempDir dir;
  const std::string system = dir.file("system.db"), user = dir.file("user.db");
  const test::ScopedEnv tune_cache("KFORGE_CACHE_DIR", dir.file("tune-binaries"));
  tune(system, "M=48,N=40,K=32");
  tune(user, "M=64,N=64,K=64");

  const json from_system = lookup_json("--shape M=48,N=40,K=32 --db " + user + " --system-db " + system);
  CHECK(from_system["rule"] == "exact");
  CHECK(from_system["database"] == system);
  const std::string why = from_system["explanation"];
  CHECK_THAT(why, Catch::Contains("database: user " + user + " (read-only)"));
  CHECK_THAT(why, Catch::Contains("database: system " + system + " (read-only, immutable)"));
  CHECK_THAT(why, Catch::Contains("from the system database " + system));

  const json from_user = lookup_json("--shape M=64,N=64,K=64 --db " + user + " --system-db " + system);
  CHECK(from_user["rule"] == "exact");
  CHECK(from_user["database"] == user);
  CHECK_THAT(from_user["explanation"].get<std::string>(), Catch::Contains("from the user database " + user));

  const json only_system = lookup_json("--shape M=64,N=64,K=64 --db " + dir.file("none.db") + " --system-db " + system);
  CHECK(only_system["rule"] == "nearest");
  CHECK(only_system["database"] == system);
  CHECK_THAT(only_system["explanation"].get<std::string>(), Catch::Contains("no user database at"));

  SECTION("--prepare: compiled once, then loaded from the binary cache; --no-binary-cache compiles") {
    const std::string cache = dir.file("binaries");
    const test::ScopedEnv lookup_cache("KFORGE_CACHE_DIR", cache);
    const std::string args = "--prepare --shape M=48,N=40,K=32 --system-db " + system;
    const json first = lookup_json(args);
    CHECK(first["kernel"]["origin"] == "compiled");
    const std::string entry = first["kernel"]["cache_entry"];
    CHECK(entry.rfind(cache + "/", 0) == 0);
    const json second = lookup_json(args);
    CHECK(second["kernel"]["origin"] == "disk");
    CHECK(second["kernel"]["cache_entry"] == entry);
    const test::CommandResult text = test::run_kforge("lookup " + args);
    CHECK_THAT(text.out, Catch::Contains("kernel: loaded from the binary cache (" + entry + ")"));
    const json off = lookup_json(args + " --no-binary-cache");
    CHECK(off["kernel"]["origin"] == "compiled");
    CHECK(off["kernel"]["cache_entry"] == "");
  }
}
