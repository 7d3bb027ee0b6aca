// Whole-sweep estimate: the current task's own estimate plus the tasks to
// come, from finished tasks' mean, capped by each task's time budget.
#include <catch2/catch.hpp>

#include "sweep/sweep_eta.hpp"

using namespace kforge;

TEST_CASE("sweep eta: nothing before the first task starts") {
  SweepEta eta({0, 0});
  CHECK_FALSE(eta.remaining_s(1, 1).has_value());
  CHECK(eta.tasks_after_current() == 2);
}

TEST_CASE("sweep eta: before any task finishes, tasks to come cost what the current one projects") {
  SweepEta eta({0, 0, 0});
  eta.start(0);
  // 10 s spent, 30 s left: 40 s per task, two more to come.
  CHECK(*eta.remaining_s(10, 30) == Approx(30 + 2 * 40));
  CHECK(eta.tasks_after_current() == 2);
}

TEST_CASE("sweep eta: after tasks finish, their mean estimates the rest") {
  SweepEta eta({0, 0, 0, 0});
  eta.start(0);
  eta.finish(100);
  eta.start(1);
  eta.finish(50);
  eta.start(2);
  // mean 75 s for the one task after this one, plus this task's 5 s left
  CHECK(*eta.remaining_s(1000, 5) == Approx(5 + 75));
  eta.finish(60);
  eta.start(3);
  CHECK(*eta.remaining_s(0, 7) == Approx(7));
  CHECK(eta.tasks_after_current() == 0);
}

TEST_CASE("sweep eta: a task's time budget caps its estimate") {
  SweepEta eta({0, 0, 20, 0});
  eta.start(0);
  eta.finish(100);
  eta.start(1);
  // task 2 capped at its 20 s budget, task 3 at the 100 s mean
  CHECK(*eta.remaining_s(0, 0) == Approx(20 + 100));
  // at task 1's start: itself (100) + task 2 (20) + task 3 (100)
  CHECK(*eta.remaining_at_start_s() == Approx(100 + 20 + 100));
}

TEST_CASE("sweep eta: no estimate at a task's start until a task has finished") {
  SweepEta eta({0, 0});
  eta.start(0);
  CHECK_FALSE(eta.remaining_at_start_s().has_value());
}

TEST_CASE("sweep eta: with several ranks, the work left is shared among them") {
  SweepEta eta({0, 0, 0, 0, 0, 0});
  eta.start(0);
  CHECK_FALSE(eta.remaining_parallel_s({0, 0}, 2).has_value());  // no finished task to go by
  eta.finish(10);
  eta.finish(30);
  eta.start(4);  // four handed out: two finished, two running
  // Mean 20 s: two not handed out (40 s) plus 20-5 and 20-25 (none) left of the running ones, over 2 ranks.
  CHECK(*eta.remaining_parallel_s({5, 25}, 2) == Approx((40 + 15) / 2.0));
  eta.start(6);  // all handed out
  CHECK(*eta.remaining_parallel_s({}, 3) == Approx(0));
}
