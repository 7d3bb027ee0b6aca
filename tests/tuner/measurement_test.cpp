// The measurement protocol against a scripted device: precision stop, budget
// and repetition bounds, early cut, interleaved order of finalists.
#include <catch2/catch.hpp>

#include <deque>

#include "tuner/measure/measurement.hpp"
#include "tuner/worker/worker_protocol.hpp"

using namespace kforge;

namespace {

class NoCompiler final : public Compiler {
 public:
  std::string name() const override { return "none"; }
  std::string version() const override { return "0"; }
  Result<CompiledKernel> compile(const std::string&, const std::string&, const std::string&) override {
    return Error::internal("not a compiler");
  }
};

class NamedKernel final : public Kernel {
 public:
  explicit NamedKernel(std::string n) : name_(std::move(n)) {}
  const std::string& name() const override { return name_; }
  ResourceReport resources() const override { return {}; }

 private:
  std::string name_;
};

/// Launch times come from a per-kernel script (the last value repeats);
/// every launch and flush is logged.
class ScriptedDevice final : public Device {
 public:
  std::map<std::string, std::deque<double>> script;
  std::vector<std::string> log;
  const DeviceInfo& info() const override { return info_; }
  Compiler& compiler() override { return compiler_; }
  Result<std::unique_ptr<Kernel>> load(const CompiledKernel&) override { return Error::internal("no"); }
  Result<std::unique_ptr<Buffer>> allocate(std::size_t) override { return Error::internal("no"); }
  Status write(Buffer&, const void*, std::size_t) override { return ok_status(); }
  Status read(const Buffer&, void*, std::size_t) override { return ok_status(); }
  Result<double> launch(Kernel& k, const std::vector<KernelArg>&, const LaunchGeometry&,
                        const OnRunning& = {}) override {
    log.push_back(k.name());
    auto& q = script[k.name()];
    const double t = q.front();
    if (q.size() > 1) q.pop_front();
    return t;
  }
  Status enqueue(Kernel& k, const std::vector<KernelArg>&, const LaunchGeometry&) override {
    log.push_back("enqueue " + k.name());
    return ok_status();
  }
  Status synchronize() override { return ok_status(); }
  Status flush_cache() override {
    log.push_back("flush");
    return ok_status();
  }

 private:
  DeviceInfo info_;
  NoCompiler compiler_;
};

/// The kernels launched for timing (flushes and the warm-ups, one per
/// finalist at the start, left out).
std::vector<std::string> timed_launches(const ScriptedDevice& dev, std::size_t warmups) {
  std::vector<std::string> timed;
  for (std::size_t i = warmups; i < dev.log.size(); ++i) {
    if (dev.log[i] != "flush") timed.push_back(dev.log[i]);
  }
  return timed;
}

MeasurementProtocol protocol() {
  MeasurementProtocol p;
  p.warmup = 1;
  p.min_reps = 5;
  p.max_reps = 30;
  p.budget_ms = 1e9;  // never by time: the tests must not depend on the wall clock
  return p;
}

}  // namespace

TEST_CASE("a stable kernel stops once the median's interval is narrow", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("a");
  dev.script["a"] = {1.0};
  auto s = measure(dev, k, {}, {}, protocol());
  REQUIRE(s.ok());
  CHECK(s->stop == TimingStop::kCi);
  CHECK(s->count == 6);  // the first n with a 95% interval
  CHECK(s->median_ms == 1.0);
}

TEST_CASE("a noisy kernel runs to max_reps", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("a");
  std::deque<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(i % 2 ? 1.0 : 2.0);
  dev.script["a"] = noisy;
  auto s = measure(dev, k, {}, {}, protocol());
  REQUIRE(s.ok());
  CHECK(s->stop == TimingStop::kMaxReps);
  CHECK(s->count == 30);
  // Warm-up untimed, then a flush before every timed launch.
  REQUIRE(dev.log.size() == 1 + 2 * 30);
  CHECK(dev.log[0] == "a");
  CHECK(dev.log[1] == "flush");
  CHECK(dev.log[2] == "a");
}

TEST_CASE("a candidate far slower than the best is cut early", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("slow");
  std::deque<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(i % 2 ? 10.0 : 12.0);
  dev.script["slow"] = noisy;
  // Fastest of the first two samples 10 ms: cut at the default 1.5 x a best of 6 ms.
  auto s = measure(dev, k, {}, {}, protocol(), /*best_ms=*/6.0);
  REQUIRE(s.ok());
  CHECK(s->stop == TimingStop::kCut);
  CHECK(s->count == 2);
  // Not cut when within the ratio of the best (nor stopped outside the
  // finalist window: its interval's low end, 10 ms, is within 1.1 x 9.5 ms).
  dev.script["slow"] = noisy;
  auto near = measure(dev, k, {}, {}, protocol(), /*best_ms=*/9.5);
  REQUIRE(near.ok());
  CHECK(near->stop == TimingStop::kMaxReps);
  // Nor ever with a ratio of 0.
  dev.script["slow"] = noisy;
  MeasurementProtocol never = protocol();
  never.cut_ratio = 0;
  never.stop_outside_window = false;  // the other stop a best far below would bring
  auto uncut = measure(dev, k, {}, {}, never, /*best_ms=*/1.0);
  REQUIRE(uncut.ok());
  CHECK(uncut->stop == TimingStop::kMaxReps);
}

TEST_CASE("a candidate surely outside the finalist window stops once its interval says so", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("a");
  // 10-12 ms, too noisy for the precision stop; the best so far 8 ms. Not
  // cut (fastest 10 ms < 1.5 x 8), but from n = 6 the median's 95%
  // interval, [10, 12], lies above 1.1 x 8 = 8.8 ms.
  std::deque<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(i % 2 ? 10.0 : 12.0);
  dev.script["a"] = noisy;
  auto s = measure(dev, k, {}, {}, protocol(), /*best_ms=*/8.0);
  REQUIRE(s.ok());
  CHECK(s->stop == TimingStop::kOutsideWindow);
  CHECK(s->count == 6);
  CHECK(s->ci.low_ms > 1.1 * 8.0);
  // Where the interval reaches into the window, it runs on: 1.1 x 9.2 ms > 10 ms.
  dev.script["a"] = noisy;
  auto close = measure(dev, k, {}, {}, protocol(), /*best_ms=*/9.2);
  REQUIRE(close.ok());
  CHECK(close->stop == TimingStop::kMaxReps);
  // With no best yet (the first candidate, or the default), never.
  dev.script["a"] = noisy;
  auto first = measure(dev, k, {}, {}, protocol());
  REQUIRE(first.ok());
  CHECK(first->stop == TimingStop::kMaxReps);
  // Nor with the stop turned off.
  dev.script["a"] = noisy;
  MeasurementProtocol off = protocol();
  off.stop_outside_window = false;
  auto unstopped = measure(dev, k, {}, {}, off, /*best_ms=*/8.0);
  REQUIRE(unstopped.ok());
  CHECK(unstopped->stop == TimingStop::kMaxReps);
}

TEST_CASE("validation launches count toward the cut's evidence, never as samples", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("slow");
  MeasurementProtocol p = protocol();
  p.warmup = 0;  // the validation launches were the warm-up
  const std::vector<double> validation{11.0};
  // The untimed validation launch and one timed sample, both over 1.5 x a best of 6 ms: cut after one sample.
  dev.script["slow"] = {10.0};
  auto s = measure(dev, k, {}, {}, p, /*best_ms=*/6.0, validation);
  REQUIRE(s.ok());
  CHECK(s->stop == TimingStop::kCut);
  CHECK(s->count == 1);
  CHECK(s->median_ms == 10.0);  // the sample alone: validation times are not samples
  CHECK(dev.log == std::vector<std::string>{"flush", "slow"});
  // A fast validation launch is evidence too: fastest 8 ms is within 1.5 x 6 ms, so not cut.
  dev.script["slow"] = {10.0};
  dev.log.clear();
  auto near = measure(dev, k, {}, {}, p, /*best_ms=*/6.0, std::vector<double>{8.0});
  REQUIRE(near.ok());
  CHECK(near->stop != TimingStop::kCut);
  CHECK(near->count >= p.min_reps);
  // Without a best there is nothing to cut against.
  dev.script["slow"] = {10.0};
  auto first = measure(dev, k, {}, {}, p, /*best_ms=*/0, validation);
  REQUIRE(first.ok());
  CHECK(first->stop != TimingStop::kCut);
}

TEST_CASE("the first timed launch can be checked before any other, and a failed check stops timing",
          "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel k("K");
  dev.script["K"] = {4.0};
  MeasurementProtocol p = protocol();
  p.warmup = 0;
  // The check runs once, right after the first timed launch (the tuner
  // reads back and validates that launch's output there).
  std::vector<std::size_t> log_at_check;
  auto passed = measure(dev, k, {}, {}, p, 0, {}, [&] {
    log_at_check.push_back(dev.log.size());
    return true;
  });
  REQUIRE(passed.ok());
  CHECK(log_at_check == std::vector<std::size_t>{2});  // flush, K
  CHECK(passed->count >= p.min_reps);
  // A failed check ends timing after that launch.
  dev.log.clear();
  auto failed = measure(dev, k, {}, {}, p, 0, {}, [] { return false; });
  REQUIRE(failed.ok());
  CHECK(failed->stop == TimingStop::kRejected);
  CHECK(dev.log == std::vector<std::string>{"flush", "K"});
}

TEST_CASE("the clocks count from the first timed launch, or from the validation launches before it",
          "[measurement][unit]") {
  class CountingReader final : public ClockReader {
   public:
    int restarts = 0, reads = 0;
    const std::string& source() const override { return source_; }
    Result<ClockSample> read() override {
      ++reads;
      ClockSample s;
      s.core_mhz = 1000;
      return s;
    }
    void restart() override { ++restarts; }

   private:
    std::string source_ = "counting";
  };
  ScriptedDevice dev;
  NamedKernel k("K");
  dev.script["K"] = {1.0};
  CountingReader reader;
  auto p = protocol();
  // No launches before: the reader starts its count here.
  REQUIRE(measure(dev, k, {}, {}, p, 0, {}, &reader).ok());
  CHECK(reader.restarts == 1);
  CHECK(reader.reads >= p.min_reps);
  // Validation launches before count as evidence: the caller restarted the
  // reader before them, and measure keeps that count going.
  REQUIRE(measure(dev, k, {}, {}, p, 0, std::vector<double>{1.0}, &reader).ok());
  CHECK(reader.restarts == 1);
  // Interleaved finalists start their own count.
  NamedKernel b("B");
  dev.script["B"] = {2.0};
  std::vector<KernelArg> args;
  REQUIRE(measure_interleaved(dev, {{&k, &args, {}}, {&b, &args, {}}}, p, &reader).ok());
  CHECK(reader.restarts == 2);
}

TEST_CASE("finalists are re-timed interleaved, one launch of each per round, each round starting one later", "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel a("A"), b("B"), c("C");
  dev.script["A"] = {2.0};
  dev.script["B"] = {1.0};
  dev.script["C"] = {3.0};
  std::vector<KernelArg> args;
  auto p = protocol();
  p.finalist_rounds = 4;
  auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}, {&c, &args, {}}}, p);
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  CHECK((*s)[0].count == 4);
  CHECK((*s)[1].median_ms == 1.0);
  // Each round starts one later.
  CHECK(timed_launches(dev, 3) ==
        std::vector<std::string>{"A", "B", "C", "B", "C", "A", "C", "A", "B", "A", "B", "C"});
}

TEST_CASE("finalists race: one slower than the leader in every round stops, a close one runs on",
          "[measurement][unit]") {
  ScriptedDevice dev;
  NamedKernel a("A"), b("B"), c("C");
  dev.script["A"] = {2.0};                                        // behind in every round
  dev.script["B"] = {1.0};                                        // the leader
  // Ahead of B in round 1 (the first value is its warm-up launch).
  dev.script["C"] = {1.0, 0.9, 1.2, 1.1, 1.3, 1.2, 1.1, 1.2, 1.3, 1.2, 1.1};
  std::vector<KernelArg> args;
  auto p = protocol();
  p.finalist_rounds = 10;
  p.finalist_race_after = 5;
  auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}, {&c, &args, {}}}, p);
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  CHECK((*s)[0].count == 5);
  CHECK((*s)[0].stop == TimingStop::kRaced);
  CHECK((*s)[1].count == 10);
  CHECK((*s)[1].stop == TimingStop::kInterleaved);
  CHECK((*s)[2].count == 10);
  CHECK((*s)[2].stop == TimingStop::kInterleaved);
  // Five rounds of three, each starting one later, then B and C alone.
  const std::vector<std::string> expected{"A", "B", "C", "B", "C", "A", "C", "A", "B", "A", "B", "C", "B", "C", "A",
                                          "C", "B", "B", "C", "B", "C", "C", "B", "B", "C"};
  CHECK(timed_launches(dev, 3) == expected);
}

TEST_CASE("finalists race: the re-timing ends when the leader is alone, and not before the race starts",
          "[measurement][unit]") {
  std::vector<KernelArg> args;
  NamedKernel a("A"), b("B"), c("C");
  auto p = protocol();
  p.finalist_rounds = 10;
  p.finalist_race_after = 5;
  SECTION("both others behind in every round: five rounds") {
    ScriptedDevice dev;
    dev.script["A"] = {2.0};
    dev.script["B"] = {1.0};
    dev.script["C"] = {1.05};
    auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}, {&c, &args, {}}}, p);
    REQUIRE(s.ok());
    for (const auto& t : *s) CHECK(t.count == 5);
    CHECK((*s)[0].stop == TimingStop::kRaced);
    CHECK((*s)[1].stop == TimingStop::kInterleaved);
    CHECK((*s)[2].stop == TimingStop::kRaced);
    CHECK((*s)[1].median_ms == 1.0);
    CHECK(timed_launches(dev, 3).size() == 15);
  }
  SECTION("the leader changes: the one ahead in the later rounds wins, the early leader is not dropped") {
    ScriptedDevice dev;
    dev.script["A"] = {1.0};
    dev.script["B"] = {1.5, 1.5, 1.5, 0.8};  // warm-up, two rounds behind A, then ahead
    auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}}, p);
    REQUIRE(s.ok());
    // A beat B in rounds 1 and 2, so it never lost every round: both run ten.
    CHECK((*s)[0].count == 10);
    CHECK((*s)[1].count == 10);
    CHECK((*s)[1].median_ms < (*s)[0].median_ms);
  }
  SECTION("racing off: every finalist every round") {
    ScriptedDevice dev;
    dev.script["A"] = {2.0};
    dev.script["B"] = {1.0};
    p.finalist_race_after = 0;
    auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}}, p);
    REQUIRE(s.ok());
    CHECK((*s)[0].count == 10);
    CHECK((*s)[0].stop == TimingStop::kInterleaved);
  }
  SECTION("fewer rounds than the race needs: nobody is dropped") {
    ScriptedDevice dev;
    dev.script["A"] = {2.0};
    dev.script["B"] = {1.0};
    p.finalist_rounds = 4;
    auto s = measure_interleaved(dev, {{&a, &args, {}}, {&b, &args, {}}}, p);
    REQUIRE(s.ok());
    CHECK((*s)[0].count == 4);
    CHECK((*s)[1].count == 4);
  }
}

TEST_CASE("finalists: the fastest few, and every other within the window of the fastest", "[measurement][unit]") {
  MeasurementProtocol p;
  p.finalists = 3;
  p.finalist_window = 0.10;
  p.max_finalists = 5;
  // Search medians in evaluation order; 0: not ok.
  const std::vector<double> medians{12.0, 10.0, 0.0, 10.9, 30.0, 10.5, 11.0, 10.95, 11.2};
  // Fastest first: 10.0 (1), 10.5 (5), 10.9 (3), then within 11.0: 10.95 (7), 11.0 (6); 11.2 is outside.
  CHECK(choose_finalists(medians, p) == std::vector<std::size_t>{1, 5, 3, 7, 6});
  // At most max_finalists.
  p.max_finalists = 4;
  CHECK(choose_finalists(medians, p) == std::vector<std::size_t>{1, 5, 3, 7});
  // Without a window, the `finalists` fastest, however far apart.
  p.finalist_window = 0;
  CHECK(choose_finalists({30.0, 10.0, 20.0, 0.0, 40.0}, p) == std::vector<std::size_t>{1, 2, 0});
  // Never a failed candidate, never more than there are.
  CHECK(choose_finalists({0.0, 5.0, -1.0}, p) == std::vector<std::size_t>{1});
  CHECK(choose_finalists({}, p).empty());
}

TEST_CASE("every protocol setting reaches the worker as set", "[measurement][unit]") {
  // The measuring worker reads its protocol from the JSON the sweep stores
  // (MeasurementProtocol::to_json): a setting left out of the reading would
  // leave the worker at its default while the sweep records another.
  MeasurementProtocol p;
  p.warmup = 3;
  p.min_reps = 7;
  p.max_reps = 11;
  p.budget_ms = 123;
  p.flush_cache = false;
  p.ci_rel_width = 0.07;
  p.cut_ratio = 2.5;
  p.cut_after = 4;
  p.stop_outside_window = false;
  p.finalists = 5;
  p.finalist_window = 0.2;
  p.max_finalists = 9;
  p.finalist_rounds = 13;
  p.finalist_race_after = 2;
  p.finalist_retimings = 1;
  p.retime_load_share = 0.4;
  const nlohmann::json sent = p.to_json();
  CHECK(protocol_from_json(sent).to_json() == sent);
  CHECK(sent != MeasurementProtocol{}.to_json());
}

TEST_CASE("A worker message that does not read back is a crash, never an exception", "[worker]") {
  // Found by tests/fuzz/fuzz_worker_protocol: nlohmann's value() threw on a
  // field of another type, and the tuner ended in std::terminate.
  const auto bad = nlohmann::json::parse(R"({"status": "ok", "reason": 5, "timing": {"median_ms": 1.0}})");
  const Evaluation e = evaluation_from_json(bad);
  CHECK(e.status == CandidateStatus::kCrash);
  CHECK_THAT(e.reason, Catch::Contains("does not read back"));
  // An ok evaluation whose timing is garbage is not taken as a 0 ms winner.
  const auto garbled = nlohmann::json::parse(R"({"status": "ok", "timing": {"samples_ms": [true]}})");
  CHECK(evaluation_from_json(garbled).status == CandidateStatus::kCrash);
  CHECK(timing_from_json(nlohmann::json::parse(R"({"count": "many"})")).count == 0);
  // Why timing stopped travels as its word; a word no stop has reads as none.
  TimingStats cut = TimingStats::from_samples({2.0, 3.0});
  cut.stop = TimingStop::kCut;
  CHECK(timing_from_json(to_json(cut)).stop == TimingStop::kCut);
  CHECK(timing_from_json(nlohmann::json::parse(R"({"stop": "precision"})")).stop == TimingStop::kNone);
  const auto refs = refs_from_json(nlohmann::json::parse(R"([{"template": "t", "config": "A1"}, {"template": 7}, 3])"));
  REQUIRE(refs.size() == 1);
  CHECK(refs[0].config == "A1");
}

TEST_CASE("Integers of a worker message out of their type's range are refused, never cast", "[worker]") {
  // Found by tests/fuzz/fuzz_worker_protocol: a float seed read as an
  // unsigned integer is undefined behaviour (UBSan: outside the range of
  // representable values).
  auto setup = nlohmann::json::parse(
      R"({"device": "opencl:0", "problem": {"op": "gemm", "dims": {"M": 64, "N": 64, "K": 64, "batch": 1},
          "dtype": "f32", "layout": "NN", "epilogue": "none", "attrs": {}},
          "templates": [], "workload_seed": 7.2e61, "protocol": {"warmup": 1e300, "min_reps": 3}})");
  auto refused = setup_from_json(setup);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("workload_seed"));
  setup["workload_seed"] = 7;
  auto read = setup_from_json(setup);
  REQUIRE(read.ok());
  CHECK(read->protocol.warmup == MeasurementProtocol{}.warmup);  // out of range: the default
  CHECK(read->protocol.min_reps == 3);
  setup["problem"]["dims"]["M"] = 1e30;
  auto bad_dim = setup_from_json(setup);
  REQUIRE_FALSE(bad_dim.ok());
  CHECK_THAT(bad_dim.error().message, Catch::Contains("problem.dims.M"));
}
