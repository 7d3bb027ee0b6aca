// Deciding the winner against a scripted runner: the finalists are re-timed
// once when the machine holds still, and again, with the candidates stored
// faster, when its speed changed between the search and the re-timing.
#include <catch2/catch.hpp>

#include <map>

#include "tuner/measure/finalist_retiming.hpp"

using namespace kforge;

namespace {

/// Re-times every candidate at its script's time for the current re-timing
/// (a candidate not in the script: its search median times the re-timing's
/// `slowdown`), and logs who was asked.
class ScriptedRunner final : public CandidateRunner {
 public:
  std::vector<std::map<std::string, double>> passes;  ///< per re-timing: config -> median ms
  std::vector<double> slowdown;                       ///< per re-timing (default 1)
  std::vector<std::vector<std::string>> asked;
  const std::map<std::string, double>* search = nullptr;

  Result<Evaluation> evaluate(const std::string&, const Config&, double,
                              const std::function<void(std::string_view)>&) override {
    return Error::internal("not in this test");
  }
  Result<Evaluation> validate(const std::string&, const Config&,
                              const std::function<void(std::string_view)>&) override {
    return Error::internal("not in this test");
  }
  Result<PrecompileReport> precompile(const std::vector<CandidateRef>&) override { return PrecompileReport{}; }
  Result<RetimeReport> retime(const std::vector<CandidateRef>& refs) override {
    if (asked.size() >= passes.size()) return Error::internal("no more re-timings scripted");
    const auto& pass = passes[asked.size()];
    asked.emplace_back();
    RetimeReport r;
    for (const auto& c : refs) {
      asked.back().push_back(c.config);
      const auto it = pass.find(c.config);
      const std::size_t k = asked.size() - 1;
      const double ms = it != pass.end() ? it->second : search->at(c.config) * (k < slowdown.size() ? slowdown[k] : 1.0);
      r.timings.push_back(TimingStats::from_samples({ms, ms, ms, ms, ms}));
      r.timings.back().stop = TimingStop::kInterleaved;
    }
    return r;
  }
};

TuneSummary searched(const std::map<std::string, double>& medians) {
  TuneSummary s;
  for (const auto& [config, ms] : medians) {
    CandidateOutcome o;
    o.template_name = "t";
    o.config = config;
    o.timing = TimingStats::from_samples({ms, ms, ms});
    s.outcomes.push_back(o);
  }
  CandidateOutcome failed;
  failed.template_name = "t";
  failed.config = "F";
  failed.status = CandidateStatus::kWrongResult;
  s.outcomes.push_back(failed);
  s.default_result = s.outcomes[0];
  return s;
}

struct Stored {
  std::map<std::string, double> median;  ///< config -> last stored median
  std::vector<int> retimings;            ///< each store's re-timing number
};

StoreRetiming store_into(Stored& stored) {
  return [&stored](const CandidateOutcome& o, const TimingStats& t, int retiming) {
    stored.median[o.config] = t.median_ms;
    stored.retimings.push_back(retiming);
    return ok_status();
  };
}

MeasurementProtocol finalist_protocol() {
  MeasurementProtocol p;
  p.finalists = 3;
  p.finalist_window = 0.10;
  p.max_finalists = 4;
  p.finalist_retimings = 3;
  return p;
}

}  // namespace

TEST_CASE("finalists: one re-timing when the machine holds still", "[measurement][unit]") {
  // Search medians: A B C are the finalists, D and E are not.
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 11.5}, {"C", 12.0}, {"D", 13.0}, {"E", 20.0}};
  auto summary = searched(search);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes = {{{"A", 10.4}, {"B", 10.2}, {"C", 12.1}}};
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  CHECK(runner.asked == std::vector<std::vector<std::string>>{{"A", "B", "C"}});
  CHECK(summary.retiming.retimings == 1);
  CHECK(summary.retiming.note.empty());
  REQUIRE(summary.winner);
  CHECK(summary.winner->config == "B");
  CHECK(summary.winner->timing.median_ms == 10.2);
  CHECK(summary.finalists.size() == 3);
  CHECK(summary.default_result->timing.median_ms == 10.4);  // A, as stored
}

TEST_CASE("finalists: re-timed again with the candidates stored faster when the machine slowed down in between",
          "[measurement][unit]") {
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 11.5}, {"C", 12.0}, {"D", 13.0}, {"E", 20.0}};
  auto summary = searched(search);
  ScriptedRunner runner;
  runner.search = &search;
  Stored stored;
  SECTION("the machine is back to its speed for the second re-timing") {
    // The first re-timing ran 1.5x slow: D (13.0, timed in the search) now
    // looks faster than all three. The second holds B, the first's fastest,
    // and D, the only one stored faster than B.
    runner.passes = {{{"A", 15.6}, {"B", 15.0}, {"C", 18.0}}, {{"B", 10.1}, {"A", 10.3}, {"D", 13.1}}};
    REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
    REQUIRE(runner.asked.size() == 2);
    CHECK(runner.asked[1] == std::vector<std::string>{"B", "D"});
    CHECK(summary.retiming.retimings == 2);
    CHECK(summary.retiming.note.empty());
    REQUIRE(summary.winner);
    CHECK(summary.winner->config == "B");
    CHECK(summary.winner->timing.median_ms == 10.1);
    CHECK(stored.median.at("D") == 13.1);
    CHECK(stored.retimings == std::vector<int>{1, 1, 1, 2, 2});
    // Each once, with its last timing, in the order first re-timed.
    REQUIRE(summary.finalists.size() == 4);
    CHECK(summary.finalists[1].outcome.config == "B");
    CHECK(summary.finalists[1].interleaved.median_ms == 10.1);
    CHECK(summary.finalists[3].outcome.config == "D");
  }
}

TEST_CASE("finalists: a candidate stored exactly as fast as the re-timing's fastest is re-timed with it",
          "[measurement][unit]") {
  // A is no finalist (B C D are faster in the search); the re-timing, 1.3x
  // slow, puts B exactly on A's search median, and A comes first.
  const std::map<std::string, double> search{{"A", 13.0}, {"B", 10.0}, {"C", 10.5}, {"D", 10.8}};
  auto summary = searched(search);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes = {{{"B", 13.0}, {"C", 13.65}, {"D", 14.04}}, {{"B", 10.0}, {"A", 13.0}}};
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  REQUIRE(runner.asked.size() == 2);
  CHECK(runner.asked[1] == std::vector<std::string>{"B", "A"});
  CHECK(summary.retiming.note.empty());
  REQUIRE(summary.winner);
  CHECK(summary.winner->config == "B");
}

TEST_CASE("finalists: after the last re-timing an unsettled winner stands as stored, with a note",
          "[measurement][unit]") {
  // A B C are the finalists; seven more lie within 25% of A.
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 10.5}, {"C", 10.8}, {"D", 11.2}, {"E", 11.4},
                                             {"G", 11.6}, {"H", 11.8}, {"I", 12.0}, {"J", 12.2}, {"K", 12.4}};
  auto summary = searched(search);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes.resize(4);
  runner.slowdown = {1.5, 1.5, 1.5, 1.0};  // slow for as long as the re-timings last
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  // Each re-timing: the last one's fastest, A, and the three stored fastest
  // (max_finalists 4).
  CHECK(runner.asked == std::vector<std::vector<std::string>>{
                            {"A", "B", "C"}, {"A", "D", "E", "G"}, {"A", "H", "I", "J"}});
  CHECK(summary.retiming.retimings == 3);
  CHECK_THAT(summary.retiming.note, Catch::Contains("after 3 re-timings") &&
                                        Catch::Contains("1 candidate(s) timed earlier") && Catch::Contains("A (15 ms"));
  REQUIRE(summary.winner);
  CHECK(summary.winner->config == "K");  // as the database's winners table would say
  CHECK(summary.winner->timing.median_ms == 12.4);
  CHECK(summary.finalists.size() == 9);
}

TEST_CASE("finalists: a candidate slowed by other load while timed is re-timed beside the winner, once",
          "[measurement][unit]") {
  // E was timed while other processes took 45% of the host: 18 ms, which at
  // the 55% it had is 9.9 ms, within the window of the winner's 10.2. G was
  // timed under as much load but is too slow even so; H is near but was
  // timed quietly; K's share rests on too few ticks to say.
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 11.5}, {"C", 12.0}, {"E", 18.0},
                                             {"G", 30.0}, {"H", 12.5}, {"K", 13.0}};
  auto summary = searched(search);
  auto load = [&](const std::string& config, double ticks, double other) {
    for (auto& o : summary.outcomes) {
      if (o.config == config) {
        o.timing.clocks.cpu_ticks = ticks;
        o.timing.clocks.other_cpu_ticks = other;
      }
    }
  };
  load("E", 40, 18);
  load("G", 40, 18);
  load("H", 40, 2);
  load("K", 4, 3);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes = {{{"A", 10.2}}, {{"A", 10.3}, {"E", 9.8}}};
  Stored stored;
  auto p = finalist_protocol();
  SECTION("re-timed, and the winner it turns out to be") {
    REQUIRE(retime_finalists(runner, p, summary, store_into(stored)).ok());
    REQUIRE(runner.asked.size() == 2);
    CHECK(runner.asked[1] == std::vector<std::string>{"A", "E"});
    CHECK(summary.retiming.retimed_for_load == 1);
    CHECK(summary.retiming.retimings == 2);
    REQUIRE(summary.winner);
    CHECK(summary.winner->config == "E");
    CHECK(summary.winner->timing.median_ms == 9.8);
  }
  SECTION("never with the share at 0") {
    p.retime_load_share = 0;
    REQUIRE(retime_finalists(runner, p, summary, store_into(stored)).ok());
    CHECK(runner.asked.size() == 1);
    CHECK(summary.retiming.retimed_for_load == 0);
  }
  SECTION("not beyond the re-timings allowed") {
    p.finalist_retimings = 1;
    REQUIRE(retime_finalists(runner, p, summary, store_into(stored)).ok());
    CHECK(runner.asked.size() == 1);
    CHECK(summary.winner->config == "A");
  }
}

TEST_CASE("finalists: a short candidate whose load no tick counted is judged by how long tasks waited for a core",
          "[measurement][unit]") {
  // W's samples spanned 2 clock ticks, too few to say, but tasks waited
  // for a core 45% of their wall time: 17.5 ms is then 9.6 at the host it
  // had, within the window of the winner's 10.2. Q waited as long but is
  // too slow even so; R waited little. T waited not at all, but spanned
  // enough ticks for them to say others took 40% of the host: the larger
  // reading counts (12.5 ms is 7.5 at 60%).
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 11.5}, {"C", 12.0},
                                             {"W", 17.5}, {"Q", 30.0}, {"R", 12.5}, {"T", 12.5}};
  auto summary = searched(search);
  auto waited = [&](const std::string& config, double wall_us, double wait_us, double ticks = 2, double other = 0) {
    for (auto& o : summary.outcomes) {
      if (o.config == config) {
        o.timing.clocks.cpu_ticks = ticks;
        o.timing.clocks.other_cpu_ticks = other;
        o.timing.clocks.wall_us = wall_us;
        o.timing.clocks.cpu_wait_us = wait_us;
      }
    }
  };
  waited("W", 20000, 9000);
  waited("Q", 20000, 9000);
  waited("R", 20000, 500);
  waited("T", 200000, 0, 20, 8);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes = {{{"A", 10.2}}, {{"A", 10.3}, {"W", 9.9}}};
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  REQUIRE(runner.asked.size() == 2);
  CHECK(runner.asked[1] == std::vector<std::string>{"A", "T", "W"});
  CHECK(summary.retiming.retimed_for_load == 2);
  REQUIRE(summary.winner);
  CHECK(summary.winner->config == "W");
}

TEST_CASE("finalists: a re-timing that timed nothing ends the re-timings", "[measurement][unit]") {
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 10.5}};
  auto summary = searched(search);
  ScriptedRunner runner;
  runner.search = &search;
  runner.passes = {{{"A", 0.0}, {"B", 0.0}}, {{"A", 0.0}, {"B", 0.0}}, {{"A", 0.0}, {"B", 0.0}}};
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  CHECK(runner.asked.size() == 1);
  CHECK(summary.retiming.retimings == 1);
  CHECK(summary.retiming.note.empty());
}

TEST_CASE("finalists: a runner that fails to re-time leaves the search's results", "[measurement][unit]") {
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 11.5}, {"C", 12.0}};
  auto summary = searched(search);
  CandidateOutcome before = summary.outcomes[0];
  summary.winner = before;
  ScriptedRunner runner;  // no re-timing scripted: retime() fails
  runner.search = &search;
  Stored stored;
  REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
  CHECK(summary.retiming.retimings == 0);
  CHECK(summary.finalists.empty());
  CHECK(stored.median.empty());
  REQUIRE(summary.winner);
  CHECK(summary.winner->config == "A");
}

TEST_CASE("finalists: a winner other than the search's leader is reported with both interleaved medians",
          "[measurement][unit]") {
  const std::map<std::string, double> search{{"A", 10.0}, {"B", 10.5}, {"C", 12.0}, {"D", 13.0}, {"E", 20.0}};
  auto summary = searched(search);
  const CandidateOutcome leader = summary.outcomes[0];  // A, fastest in the search
  ScriptedRunner runner;
  runner.search = &search;
  Stored stored;
  SECTION("the re-timing keeps the leader: nothing to say") {
    runner.passes = {{{"A", 10.1}, {"B", 10.6}, {"C", 12.1}}};
    REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
    CHECK_FALSE(leader_change(summary, leader));
  }
  SECTION("the re-timing puts B ahead") {
    runner.passes = {{{"A", 10.4}, {"B", 10.2}, {"C", 12.1}}};
    REQUIRE(retime_finalists(runner, finalist_protocol(), summary, store_into(stored)).ok());
    const auto note = leader_change(summary, leader);
    REQUIRE(note);
    CHECK(*note == "B 10.2 ms against A 10.4 ms, timed in alternation (the search, which timed each alone at "
                   "another moment, had them at 10.5 and 10 ms)");
  }
}

TEST_CASE("finalists: a leader change between templates names them", "[measurement][unit]") {
  CandidateOutcome a, b;
  a.template_name = "gemm_a";
  b.template_name = "gemm_b";
  a.config = b.config = "BX8";  // two templates may share configuration names
  CHECK(name_beside(a, b) == "gemm_a BX8");
  CHECK(name_beside(b, a) == "gemm_b BX8");
  b.template_name = "gemm_a";
  b.config = "BX16";
  CHECK(name_beside(b, a) == "BX16");
}
