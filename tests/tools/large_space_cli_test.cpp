// A template with 16 or 64 extra 0/1 parameters: `kforge templates` gives its
// exact cartesian size, and tune samples it under a memory cap instead of
// enumerating it.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using nlohmann::json;

namespace {

/// gemm_repeat (6 valid configurations) with `extra` 0/1 parameters XAA,
/// XAB, ... that the kernel ignores, written to `dir`.
std::string wide_template(const kforge::test::TempDir& dir, int extra) {
  const std::string from = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_repeat/";
  json m = json::parse(kforge::test::read_file(from + "manifest.json"));
  m["name"] = "gemm_wide";
  for (int i = 0; i < extra; ++i) {
    const std::string name = std::string("X") + static_cast<char>('A' + i / 26) + static_cast<char>('A' + i % 26);
    m["parameters"].push_back({{"name", name}, {"values", {0, 1}}, {"default", 0}, {"doc", "unused"}});
  }
  kforge::test::write_file(dir.file("manifest.json"), m.dump(2));
  kforge::test::write_file(dir.file("gemm_repeat.c"), kforge::test::read_file(from + "gemm_repeat.c"));
  return dir.path().string();
}

/// `kforge ARGS` with its address space capped at 4 GiB (ulimit -v): the
/// enumeration of 6 * 2^16 configurations and their features took 12 GB.
kforge::test::CommandResult run_capped(const std::string& args) {
  kforge::test::TempDir tmp;
  const std::string err_file = tmp.file("stderr");
  const std::string cmd = "(ulimit -v 4194304; exec " + std::string(KFORGE_CLI) + " " + args + ") 2>" + err_file;
  kforge::test::CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = kforge::test::read_file(err_file);
  return r;
}

json templates_entry(const std::string& tpl) {
  const auto r = kforge::test::run_kforge("templates --json --template " + tpl);
  REQUIRE(r.exit_code == 0);
  for (const auto& t : json::parse(r.out)) {
    if (t["name"] == "gemm_wide") return t;
  }
  FAIL("gemm_wide not listed");
  return {};
}

const std::string kTune = "tune --shape M=32,N=32,K=32 --no-cache --min-reps 2 --max-reps 2 --json --quiet";

}  // namespace

TEST_CASE("templates reports the exact cartesian size of a wide space", "[cli][large_space]") {
  kforge::test::TempDir d16, d64;
  const json t16 = templates_entry(wide_template(d16, 16));
  CHECK(t16["cartesian_size"] == 393216);  // 6 * 2^16
  CHECK(t16["cartesian_size_overflows"] == false);
  CHECK(t16["cartesian_size_decimal"] == "393216");
  const json t64 = templates_entry(wide_template(d64, 64));
  CHECK(t64["cartesian_size_overflows"] == true);  // the 64-bit product wraps to 0
  CHECK(t64["cartesian_size_decimal"] == "110680464442257309696");  // 6 * 2^64
  const auto table = kforge::test::run_kforge("templates --template " + d64.path().string());
  CHECK(table.out.find("110680464442257309696") != std::string::npos);
}

TEST_CASE("tune samples a space of 6 * 2^16 under a memory cap", "[cli][large_space]") {
  kforge::test::TempDir dir, db;
  const std::string tpl = wide_template(dir, 16);
  const auto r = run_capped(kTune + " --template " + tpl + " --strategy random --max-evals 1 --db " + db.file("t.db"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["evaluated_now"] == 1);
  REQUIRE(j["partial_spaces"].size() == 1);
  CHECK(j["partial_spaces"][0]["template"] == "gemm_wide");
  const std::string note = j["partial_spaces"][0]["tuned_over"];
  CHECK(note.find("more than 65536 valid configurations (cartesian size 393216)") != std::string::npos);
  CHECK(note.find("1024 drawn uniformly") != std::string::npos);
}

TEST_CASE("tune anneals and models a space of 6 * 2^64 under a memory cap", "[cli][large_space]") {
  kforge::test::TempDir dir, db;
  const std::string tpl = wide_template(dir, 64);
  for (const char* strategy : {"annealing", "model"}) {
    const auto r = run_capped(kTune + " --template " + tpl + " --strategy " + strategy + " --max-evals 3 --db " +
                              db.file(std::string(strategy) + ".db"));
    INFO(strategy << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    const json j = json::parse(r.out);
    CHECK(j["evaluated_now"] == 3);
    REQUIRE(j["partial_spaces"].size() == 1);
    CHECK(j["partial_spaces"][0]["tuned_over"].get<std::string>().find("cartesian size 110680464442257309696") !=
          std::string::npos);
  }
}

TEST_CASE("exhaustive refuses a space too large to walk unless given a budget", "[cli][large_space]") {
  kforge::test::TempDir dir, db;
  const std::string tpl = wide_template(dir, 64);
  const auto refused = run_capped(kTune + " --template " + tpl + " --strategy exhaustive --db " + db.file("t.db"));
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("template gemm_wide has more than 65536 valid configurations") != std::string::npos);
  CHECK(refused.err.find("--strategy random, annealing or model") != std::string::npos);
  const auto walked =
      run_capped(kTune + " --template " + tpl + " --strategy exhaustive --max-evals 2 --db " + db.file("t.db"));
  INFO(walked.err);
  REQUIRE(walked.exit_code == 0);
  CHECK(json::parse(walked.out)["evaluated_now"] == 2);
}
