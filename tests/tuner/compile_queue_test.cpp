// The compile-ahead queue: submit never waits, take waits for its job,
// each key compiles once, and destruction with jobs pending does not hang.
#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <string>
#include <thread>

#include "compile_queue.hpp"

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

TEST_CASE("compile queue: a key is compiled once; unknown keys are not waited for") {
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
    CompileQueue<int, int> q(1);
    std::promise<void> release;
    std::shared_future<void> gate = release.get_future().share();
    std::atomic<bool> started{false};
    q.submit(0, [&] { started = true; gate.wait(); ++runs; return 0; });
    for (int k = 1; k < 5; ++k) q.submit(k, [&] { ++runs; return k; });
    while (!started) std::this_thread::yield();
    release.set_value();
  }
  CHECK(runs >= 1);  // the running job finished
  CHECK(runs <= 5);
}
