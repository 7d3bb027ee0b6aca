// kforge compare: the statistical rule on planted changes, the CLI's verdicts,
// exit code and golden reports, on databases and on JSON exports.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/timing_compare.hpp"
#include "tests/tools/cli_util.hpp"
#include "tests/tools/golden.hpp"
#include "tests/tools/tools_fixtures.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

/// A distribution of `n` samples around `ms` with relative noise `noise`, as the fixture draws them.
report::TimingDistribution dist(double ms, std::uint64_t seed, double noise = 0.03, int n = 20) {
  test::FixtureNoise rng(seed);
  report::TimingDistribution d;
  for (int i = 0; i < n; ++i) d.samples.push_back(ms * (1 + noise * rng.next()));
  std::vector<double> s = d.samples;
  std::sort(s.begin(), s.end());
  d.median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  d.p20 = s[static_cast<std::size_t>(0.2 * (n - 1) + 0.5)];
  d.p80 = s[static_cast<std::size_t>(0.8 * (n - 1) + 0.5)];
  return d;
}

struct Fixtures {
  test::TempDir dir;
  std::string base = dir.file("base.db"), neu = dir.file("new.db");
  Fixtures() {
    test::build_fixture_db(base, test::Fixture::kBase);
    test::build_fixture_db(neu, test::Fixture::kNew);
  }
};

std::map<std::string, std::string> verdicts(const json& j) {
  std::map<std::string, std::string> out;
  for (const auto& r : j["rows"]) out[r["device_key"].get<std::string>() + " " + r["problem"].get<std::string>()] = r["verdict"];
  return out;
}

const std::string k256 = "gemm/K=256,M=256,N=256,batch=1/f32/NN";
const std::string k512 = "gemm/K=512,M=512,N=512,batch=1/f32/NN";
const std::string k1024 = "gemm/K=1024,M=1024,N=1024,batch=1/f16/NT";
const std::string k128 = "gemm/K=128,M=128,N=128,batch=1/f32/NN";

}  // namespace

TEST_CASE("compare_timings: a planted 20% regression is slower, noise is the same", "[compare]") {
  // Many independent draws: the rule must hold for every one, not a lucky seed.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed);
    const auto base = dist(1.0, seed);
    const auto slower = report::compare_timings(base, dist(1.2, seed + 1000), seed);
    CHECK(slower.verdict == report::Verdict::kSlower);
    CHECK(slower.method == "bootstrap");
    CHECK(slower.ci_low > 1.0);
    const auto faster = report::compare_timings(base, dist(0.8, seed + 2000), seed);
    CHECK(faster.verdict == report::Verdict::kFaster);
    const auto same = report::compare_timings(base, dist(1.0, seed + 3000), seed);
    CHECK(same.verdict == report::Verdict::kSame);
    const auto within = report::compare_timings(base, dist(1.005, seed + 4000), seed);
    CHECK(within.verdict == report::Verdict::kSame);
  }
}

TEST_CASE("compare_timings: the noise band comes from the distributions, not a fixed percentage", "[compare]") {
  // A 10% change is beyond noise for +-1% timings but within it for +-30% ones.
  const auto quiet = report::compare_timings(dist(1.0, 1, 0.01), dist(1.1, 2, 0.01), 7);
  CHECK(quiet.verdict == report::Verdict::kSlower);
  const auto noisy = report::compare_timings(dist(1.0, 1, 0.30), dist(1.1, 2, 0.30), 7);
  CHECK(noisy.verdict == report::Verdict::kSame);
  CHECK(noisy.noise > quiet.noise);
  CHECK(noisy.why.find("noise band") != std::string::npos);
}

TEST_CASE("compare_timings: without samples the stored intervals decide", "[compare]") {
  report::TimingDistribution a{{}, 1.0, 0.95, 1.05}, b{{}, 1.2, 1.14, 1.26}, c{{}, 1.03, 0.98, 1.08};
  const auto slower = report::compare_timings(a, b, 1);
  CHECK(slower.method == "interval");
  CHECK(slower.verdict == report::Verdict::kSlower);
  CHECK(report::compare_timings(b, a, 1).verdict == report::Verdict::kFaster);
  CHECK(report::compare_timings(a, c, 1).verdict == report::Verdict::kSame);
  // The same inputs and seed give the same interval: reports are reproducible.
  const auto x = report::compare_timings(dist(1, 3), dist(1.1, 4), 99), y = report::compare_timings(dist(1, 3), dist(1.1, 4), 99);
  CHECK(x.ci_low == y.ci_low);
  CHECK(x.ci_high == y.ci_high);
}

TEST_CASE("compare BASE NEW: verdicts, exit code and golden reports", "[compare]") {
  Fixtures f;
  auto r = test::run_kforge("compare --json " + f.base + " " + f.neu);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);  // regressed
  CHECK(r.err.find("regressed: 1 slower beyond noise, 1 lost their winner") != std::string::npos);
  const json j = json::parse(r.out);
  const auto v = verdicts(j);
  CHECK(v.at("fixture-pocl " + k256) == "slower");   // the planted 20% regression
  CHECK(v.at("fixture-pocl " + k512) == "same");     // re-tuned within noise
  CHECK(v.at("fixture-h200 " + k1024) == "faster");  // planted 20% improvement
  CHECK(v.at("fixture-h200 " + k512) == "failed");   // every candidate failed in new
  CHECK(v.at("fixture-mi300x " + k512) == "only_base");
  CHECK(v.at("fixture-pocl " + k128) == "only_new");
  CHECK(j["regressed"] == true);
  test::check_golden("compare.json", r.out);

  auto md = test::run_kforge("compare " + f.base + " " + f.neu);
  CHECK(md.exit_code == 3);
  test::check_golden("compare.md", md.out);

  // Nothing regressed: exit 0.
  auto same = test::run_kforge("compare " + f.base + " " + f.base);
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("Verdict: no regression.") != std::string::npos);
  auto only_faster = test::run_kforge("compare --json --dtype f16 " + f.base + " " + f.neu);
  CHECK(only_faster.exit_code == 0);
  CHECK(json::parse(only_faster.out)["summary"]["faster"] == 1);
}

TEST_CASE("compare names the counters that moved beside a time that moved", "[compare][counters]") {
  Fixtures f;
  test::store_winner_counters(f.base, "fixture-pocl", k256, {{"dram__bytes_read.sum", 100e6}, {"lts__t_sector_hit_rate.pct", 80}});
  test::store_winner_counters(f.neu, "fixture-pocl", k256, {{"dram__bytes_read.sum", 142e6}, {"lts__t_sector_hit_rate.pct", 78}});
  // The same numbers on a problem whose time did not move: no row for it in the Markdown.
  test::store_winner_counters(f.base, "fixture-pocl", k512, {{"dram__bytes_read.sum", 100e6}});
  test::store_winner_counters(f.neu, "fixture-pocl", k512, {{"dram__bytes_read.sum", 300e6}});
  const auto md = test::run_kforge("compare " + f.base + " " + f.neu);
  INFO(md.out << md.err);
  CHECK(md.out.find("## Counters that moved") != std::string::npos);
  CHECK(md.out.find(" | " + k256 + " | slower | yes | dram__bytes_read.sum +42% (1e+08 -> 1.42e+08 byte) |") !=
        std::string::npos);
  CHECK(md.out.find(" | " + k512 + " | same | ") == std::string::npos);

  const json j = json::parse(test::run_kforge("compare --json " + f.base + " " + f.neu).out);
  for (const auto& row : j["rows"]) {
    if (row["device_key"] != "fixture-pocl") continue;
    INFO(row.dump());
    if (row["problem"] == k256) {
      REQUIRE(row["moved_counters"].size() == 1);
      CHECK(row["moved_counters"][0]["name"] == "dram__bytes_read.sum");
      CHECK(row["moved_counters"][0]["change"].get<double>() == Approx(0.42));
    }
    if (row["problem"] == k512) CHECK(row["moved_counters"].size() == 1);  // listed in JSON, time or not
  }

  // Without counters on either side the section is absent.
  Fixtures plain;
  CHECK(test::run_kforge("compare " + plain.base + " " + plain.neu).out.find("Counters that moved") ==
        std::string::npos);
}

TEST_CASE("compare reads JSON exports as well as databases", "[compare]") {
  Fixtures f;
  const std::string b = f.dir.file("base.json"), n = f.dir.file("new.json");
  REQUIRE(test::run_kforge("export --all-results --include-stale --out " + b + " --db " + f.base).exit_code == 0);
  REQUIRE(test::run_kforge("export --all-results --include-stale --out " + n + " --db " + f.neu).exit_code == 0);
  const auto from_db = test::run_kforge("compare --json " + f.base + " " + f.neu);
  const auto from_json = test::run_kforge("compare --json " + b + " " + n);
  CHECK(from_json.exit_code == 3);
  CHECK(verdicts(json::parse(from_json.out)) == verdicts(json::parse(from_db.out)));
  // A winners-only export cannot tell "failed" from "not tuned".
  REQUIRE(test::run_kforge("export --out " + n + " --db " + f.neu).exit_code == 0);
  const auto winners_only = json::parse(test::run_kforge("compare --json " + b + " " + n).out);
  CHECK(verdicts(winners_only).at("fixture-h200 " + k512) == "only_base");
  CHECK(verdicts(winners_only).at("fixture-pocl " + k256) == "slower");
}

TEST_CASE("compare: bad inputs are one-line errors naming the file", "[compare]") {
  test::TempDir dir;
  const std::string junk = dir.file("junk.txt");
  test::write_file(junk, "hello");
  auto r = test::run_kforge("compare " + junk + " " + junk);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("junk.txt: neither a tuning database nor a JSON export") != std::string::npos);
  // --json: the value at fault is what the file starts with.
  r = test::run_kforge("compare --json " + junk + " " + junk);
  CHECK(r.exit_code == 2);
  const auto error = json::parse(r.err);
  CHECK(error.at("file") == junk);
  CHECK(error.at("value") == "hello");
  r = test::run_kforge("compare " + dir.file("missing.db") + " " + junk);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("missing.db") != std::string::npos);
}
