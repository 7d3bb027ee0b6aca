// The compile-ahead queue: submit never waits, take waits for its job,
// each key compiles once, destruction with jobs pending does not hang, and
// the pool is sized from the CPUs this process may use.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "runtime/device/host/host_cpus.hpp"
#include "tests/one_cpu_affinity.hpp"
#include "tuner/pipeline/compile_pipeline.hpp"
#include "tuner/pipeline/compile_queue.hpp"

using namespace kforge;

TEST_CASE("compile queue: submit returns while the job is still running, take waits for it") {
  CompileQueue<std::string, int> q(2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> started{false};
  REQUIRE(q.submit("a", [&] {
    started = true;
    gate.wait();  // blocks until the test releases it: submit must not wait for this
    return 7;
  }));
  CHECK(q.contains("a"));
  auto taken = std::async(std::launch::async, [&] { return q.take("a"); });
  CHECK(taken.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  release.set_value();
  auto v = taken.get();
  REQUIRE(v.has_value());
  CHECK(*v == 7);
  CHECK(started);
  CHECK_FALSE(q.contains("a"));
  CHECK_FALSE(q.take("a").has_value());  // taken once
}

TEST_CASE("compile queue: a key is compiled once, unknown keys are not waited for") {
  CompileQueue<int, int> q(3);
  std::atomic<int> runs{0};
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 10; ++k) q.submit(k, [&runs, k] { ++runs; return k * k; });
  }
  q.wait_idle();
  CHECK(runs == 10);
  for (int k = 0; k < 10; ++k) {
    auto v = q.take(k);
    REQUIRE(v.has_value());
    CHECK(*v == k * k);
  }
  CHECK_FALSE(q.take(42).has_value());
}

TEST_CASE("compile queue: destroyed with jobs queued and running, it finishes the running ones only") {
  std::atomic<int> runs{0};
  {
    // Declared before the queue, so that they outlive its destructor, which
    // waits for the running job: that job may still be inside gate.wait().
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<bool> started{false};
    CompileQueue<int, int> q(1);
    q.submit(0, [&] { started = true; gate.wait(); ++runs; return 0; });
    for (int k = 1; k < 5; ++k) q.submit(k, [&] { ++runs; return k; });
    while (!started) std::this_thread::yield();
    release.set_value();
  }
  CHECK(runs >= 1);  // the running job finished
  CHECK(runs <= 5);
}

TEST_CASE("compile queue: take runs a job still waiting for a thread at once, not after the queue") {
  CompileQueue<std::string, int> q(1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> started{false};
  REQUIRE(q.submit("busy", [&] {
    started = true;
    gate.wait();  // holds the only thread until the end of the test
    return 1;
  }));
  while (!started) std::this_thread::yield();
  REQUIRE(q.submit("queued", [] { return 5; }));
  bool ready = true;
  auto taken = std::async(std::launch::async, [&] { return q.take("queued", &ready); });
  // Waiting behind "busy" would never end before the gate opens.
  const bool done = taken.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release.set_value();
  REQUIRE(done);
  auto v = taken.get();
  REQUIRE(v.has_value());
  CHECK(*v == 5);
  CHECK_FALSE(ready);  // it had not run when taken
  q.wait_idle();
  bool busy_ready = false;
  CHECK(q.take("busy", &busy_ready) == std::optional<int>(1));
  CHECK(busy_ready);
}

TEST_CASE("compile queue: drop_queued_if drops waiting jobs only, running ones stay") {
  CompileQueue<std::string, int> q(1);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> started{false};
  std::atomic<int> runs{0};
  REQUIRE(q.submit("running", [&] {
    started = true;
    gate.wait();
    ++runs;
    return 0;
  }));
  while (!started) std::this_thread::yield();
  for (const char* k : {"b", "c", "d"}) REQUIRE(q.submit(k, [&] { ++runs; return 1; }));
  CHECK(q.drop_queued_if([](const std::string& k) { return k != "c"; }) == 2);
  CHECK(q.contains("running"));
  CHECK(q.contains("c"));
  CHECK_FALSE(q.contains("b"));
  CHECK_FALSE(q.contains("d"));
  CHECK(q.submit("b", [&] { ++runs; return 2; }));  // dropped keys can be queued again
  release.set_value();
  q.wait_idle();
  CHECK(runs == 3);  // running, c and the second b; the dropped b and d never ran
  CHECK(q.take("b") == std::optional<int>(2));
  CHECK_FALSE(q.take("d").has_value());
}

TEST_CASE("the compile pool is sized from the CPUs the process may use, not every online one") {
  int pinned = 0;
  {
    test::OneCpuAffinity one;
    REQUIRE(one.pinned());
    pinned = compile_threads(0);
  }
  CHECK(pinned == 1);
  CHECK(compile_threads(3) == 3);
  CHECK(compile_threads(0) <= usable_cpus());
}
