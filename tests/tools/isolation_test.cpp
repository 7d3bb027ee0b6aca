// One tuning run over planted faulty candidates (tests/data/templates/
// gemm_faulty): a crash, a hang, a compile error, a wrong and a NaN result
// and a local-memory overrun each end as a result with the right status,
// the run completes, and the good candidates' results are all there.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "db/database.hpp"
#include "tests/faulty_template.hpp"
#include "tests/planted_template.hpp"
#include "tests/tools/cli_util.hpp"

namespace kforge::test {

namespace {

std::map<std::string, ResultRecord> results_by_config(const std::string& db_path) {
  auto db = Database::open(db_path, Database::Mode::kReadOnly);
  REQUIRE(db.ok());
  auto rows = (*db)->results();
  REQUIRE(rows.ok());
  std::map<std::string, ResultRecord> out;
  for (auto& r : *rows) out.emplace(r.config, r);
  return out;
}

}  // namespace

TEST_CASE("isolation: a run over crashing, hanging and wrong candidates records each and completes", "[isolation]") {
  TempDir tmp;
  const std::string db = tmp.file("faulty.db");
  const auto r = run_kforge("tune --template " + kFaulty + " --shape M=24,N=20,K=8 --strategy exhaustive --db " +
                            db + " --launch-timeout 8 --min-reps 2 --max-reps 3 --no-cache --compile-threads 2 --json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["evaluated"] == 14);
  CHECK(j["winner"]["template"] == "gemm_faulty");
  CHECK_THAT(j["winner"]["config"].get<std::string>(), Catch::Contains("FLAW0"));
  // Two crashes and two hangs each cost one worker.
  CHECK(j["worker_restarts"] == 4);
  // Each restarted worker read both validation references the first wrote.
  CHECK(j["references_reused"] == 8);
  // Five worker starts (the first and the restarts): device, inputs, references.
  CHECK(j["time_s"]["setup"].get<double>() > 0);
  CHECK(j["time_s"]["setup"].get<double>() < j["time_s"]["total"].get<double>());
  // The finalists (the good candidates) were re-timed, in a worker started
  // after the last fault, at least once; each says whether it raced to the end.
  CHECK(j["retimings"].get<int>() >= 1);
  CHECK(j["time_s"]["finalists"].get<double>() > 0);
  CHECK(j["time_s"]["finalists"].get<double>() < j["time_s"]["total"].get<double>());
  REQUIRE(j["finalists"].size() >= 2);
  for (const auto& f : j["finalists"]) {
    const auto stop = f["interleaved_stop"].get<std::string>();
    CHECK((stop == "interleaved" || stop == "raced"));
  }
  // On PoCL two code generators compiled the batch (all 14 here, in
  // groups of eight consecutive configurations: one program of eight and one
  // of six) and launched its candidates one at a
  // time, each whichever generator was free: a crash or a hang costs a
  // generator its process, the other takes over what it left, until a
  // fault costs that one too. So both are lost in this one batch, and of
  // the six that launch cleanly (ok, wrong, NaN) at least the first one
  // launched was generated.
  CHECK(j["code_generators"] == 2);
  CHECK(j["generators_lost"] == 2);
  CHECK(j["generated_ahead"] >= 1);
  CHECK(j["generated_ahead"] <= 6);

  const auto rows = results_by_config(db);
  REQUIRE(rows.size() == 14);
  for (int bx : {8, 16}) {
    for (const auto& [flaw, status] : kFaultyStatus) {
      const std::string config = faulty_config(bx, flaw);
      INFO(config);
      REQUIRE(rows.count(config) == 1);
      const ResultRecord& rec = rows.at(config);
      CHECK(rec.status == status);
      if (status == "ok") {
        CHECK(rec.median_ms > 0);
        CHECK(rec.count >= 2);
      } else {
        CHECK_FALSE(rec.reason.empty());
      }
      if (status == "crash") CHECK_THAT(rec.reason, Catch::Contains("signal") && Catch::Contains(config));
      // A hang's first launch ran (its code generated) and the limit then
      // scaled with the fastest validation launch, under the 8 s floor.
      if (status == "timeout") {
        CHECK_THAT(rec.reason, Catch::Contains("launch phase") && Catch::Contains(config) &&
                                   Catch::Contains("after its first launch began to run"));
      }
      if (flaw == 5) CHECK_THAT(rec.reason, Catch::Contains("nan", Catch::CaseSensitive::No));
    }
  }
}

TEST_CASE("isolation: before any candidate has a time, the launch limit scales with the first launch",
          "[isolation]") {
  // A 1 s floor (+ 0.4 s of timing budget) is less than the launches this
  // candidate needs (two validations and 40 repetitions of about 70 ms on
  // PoCL); the first launch alone fits in it. Scaled by that launch, the
  // limit lets the run finish; held at the floor, it would kill it.
  TempDir tmp;
  const auto r = run_kforge("tune --op gemm --shape M=512,N=512,K=512 --only-template gemm_simt_tiled --max-evals 1 "
                            "--launch-timeout 1 --min-reps 40 --max-reps 40 --no-cache --json --db " +
                            tmp.file("t.db"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["failed"] == 0);
  CHECK(j["worker_restarts"] == 0);
  REQUIRE(j["winner"].is_object());
  CHECK(j["winner"]["count"].get<int>() >= 40);
}

TEST_CASE("isolation: a run whose every candidate timed out says so and names the limit to raise", "[isolation]") {
  TempDir tmp;
  // FLAW 2 loops forever, FLAW 4 computes a wrong result (faulty_template.hpp).
  const auto r = run_kforge("tune --template " + kFaulty + " --shape M=24,N=20,K=8 --config " +
                            faulty_config(8, 2) + " --launch-timeout 1 --no-cache --db " + tmp.file("t.db"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 4);  // its only candidate fails
  CHECK_THAT(r.out, Catch::Contains("no candidate passed validation (1 timeout)") &&
                        Catch::Contains("raise --launch-timeout (now 1 s)"));
  // A wrong result is not a time limit: no such advice.
  const auto wrong = run_kforge("tune --template " + kFaulty + " --shape M=24,N=20,K=8 --config " +
                                faulty_config(8, 4) + " --no-cache --db " + tmp.file("w.db"));
  CHECK_THAT(wrong.out, Catch::Contains("no candidate passed validation (1 wrong_result)"));
  CHECK_THAT(wrong.out, !Catch::Contains("--launch-timeout"));
}

TEST_CASE("isolation: --in-process runs the good candidates without a worker", "[isolation]") {
  TempDir tmp;
  const std::string db = tmp.file("inproc.db");
  const auto r = run_kforge("tune --template " + kFaulty + " --shape M=24,N=20,K=8 --config BX8_FLAW4 --db " + db +
                            " --in-process --no-cache --json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 4);  // its only candidate fails
  const auto rows = results_by_config(db);
  REQUIRE(rows.count("BX8_FLAW4") == 1);
  CHECK(rows.at("BX8_FLAW4").status == "wrong_result");
}

TEST_CASE("isolation: the binary cache serves a second run, and a corrupt entry is rebuilt", "[isolation]") {
  TempDir tmp;
  const std::string cache = tmp.file("cache");
  // One candidate at a time (--compile-threads -1): where a batch's
  // combined program is built anyway, it serves its members, stored or not
  // (docs/measurement.md, "Combined programs").
  const std::string args = "tune --shape M=32,N=32,K=32 --strategy exhaustive --max-evals 3 --min-reps 2 "
                           "--max-reps 2 --compile-threads -1 --quiet --json --cache-dir " + cache;
  const auto first = run_kforge(args + " --db " + tmp.file("a.db"));
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(nlohmann::json::parse(first.out)["cache_hits"] == 0);
  // On OpenCL, where handing out a binary costs about a build, only the
  // fastest finalist's binary is stored: the one the runtime will serve.
  auto entries = [&] {
    int n = 0;
    for (const auto& f : std::filesystem::recursive_directory_iterator(cache)) {
      n += f.is_regular_file() && f.path().extension() == ".bin";
    }
    return n;
  };
  CHECK(entries() == 1);
  // A fresh database makes every candidate new again; the binaries are not.
  const auto second = run_kforge(args + " --db " + tmp.file("b.db"));
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  const auto j = nlohmann::json::parse(second.out);
  CHECK(j["cache_hits"] == 1);
  // Every ok candidate says why its timing stopped; here all reach max_reps 2 or are cut.
  int stopped = 0;
  for (const auto& [why, n] : j["timing_stops"].items()) {
    CHECK((why == "max_reps" || why == "cut"));
    stopped += n.get<int>();
  }
  CHECK(stopped == j["evaluated_now"].get<int>() - j["failed"].get<int>());
  CHECK(j["evaluated"] == 3);
  CHECK(j["winner"].is_object());

  // Truncate every entry: each is detected, recompiled and stored again.
  int corrupted = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(cache)) {
    if (f.is_regular_file() && f.path().extension() == ".bin") {
      std::filesystem::resize_file(f.path(), std::filesystem::file_size(f.path()) / 2);
      ++corrupted;
    }
  }
  REQUIRE(corrupted >= 1);
  const auto third = run_kforge(args + " --db " + tmp.file("c.db"));
  INFO(third.out << third.err);
  REQUIRE(third.exit_code == 0);
  CHECK(nlohmann::json::parse(third.out)["cache_hits"] == 0);
  const auto fourth = run_kforge(args + " --db " + tmp.file("d.db"));
  REQUIRE(fourth.exit_code == 0);
  CHECK(nlohmann::json::parse(fourth.out)["cache_hits"] >= 1);
}

TEST_CASE("isolation: a hang costs a code generator and the worker seconds once its launch runs, not the floor",
          "[isolation]") {
  // Only good candidates and hangs (FLAW 0 and 2), so that the hangs reach
  // the code generators; at the default 20 s floor. Each hang's launch
  // begins to run (its code generated) and is then given 2 s in a
  // generator, and 2 s + the budget + the expected launches in the worker.
  TempDir tmp;
  const auto dir = tmp.path() / "gemm_faulty";
  std::filesystem::create_directories(dir);
  std::filesystem::copy(kFaulty, dir, std::filesystem::copy_options::recursive);
  const std::string manifest = (dir / "manifest.json").string();
  std::string m = read_file(manifest);
  const std::string flaws = "\"values\": [0, 1, 2, 3, 4, 5, 6]";
  REQUIRE(m.find(flaws) != std::string::npos);
  m.replace(m.find(flaws), flaws.size(), "\"values\": [0, 2]");
  write_file(manifest, m);
  const std::string db = tmp.file("h.db");
  const auto r = run_kforge("tune --template " + dir.string() + " --shape M=24,N=20,K=8 --strategy exhaustive --db " +
                            db + " --min-reps 2 --max-reps 3 --no-cache --compile-threads 2 --json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["evaluated"] == 4);
  CHECK(j["code_generators"] == 2);
  // Every generator a hang cost was lost after the launch ran: the 2 s, not the floor.
  CHECK(j["generators_lost"].get<int>() >= 1);
  CHECK(j["generators_lost_running"] == j["generators_lost"]);
  const auto rows = results_by_config(db);
  REQUIRE(rows.size() == 4);
  for (int bx : {8, 16}) {
    CHECK(rows.at(faulty_config(bx, 0)).status == "ok");
    const ResultRecord& hang = rows.at(faulty_config(bx, 2));
    CHECK(hang.status == "timeout");
    CHECK_THAT(hang.reason, Catch::Contains("after its first launch began to run"));
  }
}

TEST_CASE("isolation: a validated candidate that hangs while timed gets the run floor, its code generated",
          "[isolation]") {
  // The planted template, spinning whenever beta is 0: its validation (the
  // accumulate run) passes and the hang comes at its first timed launch,
  // the poisoned-output run, in the worker that validated it and so holds
  // its code. The limit then has the 2 s run floor, not --launch-timeout's 8 s.
  TempDir tmp;
  const std::string dir = planted_variant(tmp, "gemm_spins_timed", "", "");
  const std::string source = dir + "/gemm_naive_planted.c";
  std::string text = read_file(source);
  const std::string guard = "if (i >= M || j >= N) return;";
  REQUIRE(text.find(guard) != std::string::npos);
  text.replace(text.find(guard), guard.size(),
               guard + "\n  if (beta == 0.0f) {\n    while (((volatile KF_GLOBAL const float*)C)[0] != 1.0e30f) {\n    }\n  }");
  write_file(source, text);
  const std::string db = tmp.file("s.db");
  const auto r = run_kforge("tune --template " + dir + " --only-template gemm_spins_timed --shape M=16,N=16,K=8 "
                            "--config BX8_BY4_FLAW0 --launch-timeout 8 --min-reps 2 --max-reps 3 --no-cache --json "
                            "--db " + db);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 4);  // its only candidate fails
  const auto rows = results_by_config(db);
  REQUIRE(rows.count("BX8_BY4_FLAW0") == 1);
  const ResultRecord& rec = rows.at("BX8_BY4_FLAW0");
  CHECK(rec.status == "timeout");
  CHECK_THAT(rec.reason, Catch::Contains("its code generated by its validation launch"));
  // "no result within S s": the run floor (2 s) + the budget + 10x the launches at its validation's time.
  const auto at = rec.reason.find("within ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(rec.reason.substr(at + 7)) < 8.0);
}

}  // namespace kforge::test

namespace kforge::test {

namespace {
/// Tunes `variant` beside the planted template on `shape`: the variant must
/// be the one template skipped, with a reason holding `reason`, and the
/// planted template the winner.
void check_skipped_beside_planted(const TempDir& tmp, const std::string& variant, const std::string& name,
                                  const std::string& shape, const std::string& reason) {
  const auto r = run_kforge("tune --template " + variant + " --template " + kPlanted + " --shape " + shape +
                            " --max-evals 2 --min-reps 2 --max-reps 2 --db " + tmp.file(name + ".db") +
                            " --no-cache --json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["skipped_templates"].size() == 1);
  CHECK(j["skipped_templates"][0]["template"] == name);
  CHECK_THAT(j["skipped_templates"][0]["reason"].get<std::string>(), Catch::Contains(reason));
  CHECK(j["winner"]["template"] == "gemm_naive_planted");
}
}  // namespace

TEST_CASE("guards: a template whose architecture guard fails is skipped with its reason", "[guard]") {
  TempDir tmp;
  // The planted template behind a guard no CPU device meets.
  const std::string guarded =
      planted_variant(tmp, "gemm_guarded", "\"dtypes\"", "\"arch_guard\": [\"sm_80+\"],\n  \"dtypes\"");
  check_skipped_beside_planted(tmp, guarded, "gemm_guarded", "M=16,N=16,K=8", "gemm_guarded requires sm_80+");

  // Alone, it leaves nothing to tune: a one-line error with the guard's reason.
  const auto alone = run_kforge("tune --template " + guarded + " --shape M=16,N=16,K=8 --db " +
                                tmp.file("h.db") + " --no-cache");
  CHECK(alone.exit_code != 0);
  CHECK_THAT(alone.err, Catch::Contains("requires sm_80+"));
}

TEST_CASE("guards: a template whose envelope fails for the problem is skipped with its reason", "[guard]") {
  TempDir tmp;
  const std::string even = planted_variant(tmp, "gemm_even", "\"envelope\": []", "\"envelope\": [\"M % 2 == 0\"]");
  check_skipped_beside_planted(tmp, even, "gemm_even", "M=15,N=16,K=8", "envelope[0] 'M % 2 == 0' fails for");
}

}  // namespace kforge::test
