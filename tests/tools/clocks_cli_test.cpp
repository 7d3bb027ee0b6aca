// A PoCL tune run stores each result's clock record (the host CPU's clock
// after every timed sample) and `tune --json` and `show --results --json`
// give it back.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

json parse_json(const test::CommandResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

/// One entry of core_mhz per sample, each a plausible CPU clock; never throttled.
void check_clocks(const json& clocks, std::int64_t samples) {
  INFO(clocks.dump());
  REQUIRE(clocks.is_object());
  CHECK((clocks["source"] == "cpufreq" || clocks["source"] == "/proc/cpuinfo"));
  REQUIRE(clocks["core_mhz"].size() == static_cast<std::size_t>(samples));
  CHECK(clocks["throttled"].size() == static_cast<std::size_t>(samples));
  for (const auto& mhz : clocks["core_mhz"]) {
    CHECK(mhz.get<double>() > 100);
    CHECK(mhz.get<double>() < 10000);
  }
  CHECK(clocks["summary"]["throttled_samples"] == 0);
  CHECK(clocks["summary"]["reasons_known"] == false);
  CHECK_FALSE(clocks.contains("note"));
  // Other processes' share of the host's CPU time while timed: -1 when no
  // tick passed (these kernels take microseconds), else a fraction.
  const double share = clocks["summary"]["other_cpu_share"].get<double>();
  CHECK(clocks["summary"]["cpu_ticks"].get<double>() >= 0);
  CHECK((share == -1.0 || (share >= 0 && share <= 1)));
}

}  // namespace

TEST_CASE("a PoCL tune run stores and reports clocks", "[cli][clocks]") {
  test::TempDir dir;
  const std::string db = dir.file("x.db");
  auto t = parse_json(test::run_kforge("tune --op gemm --shape M=32,N=32,K=32 --max-evals 3 --min-reps 3 "
                                       "--max-reps 3 --quiet --json --db " + db));
  REQUIRE(t["winner"].is_object());
  check_clocks(t["winner"]["clocks"], t["winner"]["count"].get<std::int64_t>());
  REQUIRE_FALSE(t["finalists"].empty());
  for (const auto& f : t["finalists"]) check_clocks(f["interleaved_clocks"], f["interleaved_count"].get<std::int64_t>());

  auto show = parse_json(test::run_kforge("show --results --json --db " + db));
  REQUIRE(show["results"].size() == 3);
  for (const auto& r : show["results"]) {
    if (r["status"] != "ok") continue;
    check_clocks(r["clocks"], r["count"].get<std::int64_t>());
  }
}
