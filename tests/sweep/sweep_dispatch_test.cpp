// Dynamic hand-out of a distributed sweep's tasks.
#include <catch2/catch.hpp>

#include "sweep/sweep_dispatch.hpp"

using namespace kforge;

TEST_CASE("sweep dispatch: each task goes out once, in order, to whichever rank asks") {
  SweepDispatch d({3, 5, 7, 9}, 3);
  CHECK(d.next(2) == 3u);
  CHECK(d.next(0) == 5u);
  CHECK(d.running(2) == 3u);
  CHECK(d.running_count() == 2);
  d.finish(2);
  CHECK_FALSE(d.running(2).has_value());
  CHECK(d.next(2) == 7u);  // the rank that finished first gets the next task
  CHECK(d.next(1) == 9u);
  CHECK_FALSE(d.next(0).has_value());
  CHECK(d.pending() == 0);
  d.finish(0);
  d.finish(1);
  d.finish(2);
  d.finish(2);  // nothing running there: counts nothing
  CHECK(d.finished() == 4);
  CHECK(d.total() == 4);
  CHECK(d.running_count() == 0);
}

TEST_CASE("sweep dispatch: a task goes first to the rank that holds its earlier results") {
  SweepDispatch d({0, 1, 2, 3}, 2);
  d.prefer(2, 1);
  d.prefer(3, 7);  // no rank 7 in this job: no preference
  CHECK(d.next(1) == 2u);
  // Rank 0 skips a task another rank prefers while an unclaimed one is left.
  SweepDispatch e({0, 1}, 2);
  e.prefer(0, 1);
  CHECK(e.next(0) == 1u);
  e.finish(0);
  CHECK_FALSE(e.next(0).has_value());  // never another rank's: it would evaluate again what rank 1 stored
  CHECK(e.next(1) == 0u);
}

TEST_CASE("sweep dispatch: a rank outside the job gets nothing") {
  SweepDispatch d({0}, 1);
  CHECK_FALSE(d.next(1).has_value());
  CHECK_FALSE(d.next(-1).has_value());
  CHECK(d.next(0) == 0u);
}

TEST_CASE("sweep dispatch: a lost rank's task goes back first, and the rank gets nothing more") {
  SweepDispatch d({0, 1, 2, 3}, 3);
  d.prefer(3, 2);
  CHECK(d.next(2) == 3u);
  CHECK(d.next(1) == 0u);
  CHECK(d.lose(2) == 3u);  // running task 3: back at the front of the queue
  CHECK(d.lost(2));
  CHECK_FALSE(d.lost(1));
  CHECK_FALSE(d.running(2).has_value());
  CHECK_FALSE(d.next(2).has_value());
  d.finish(2);  // a late report from the lost rank counts nothing
  CHECK(d.finished() == 0);
  CHECK(d.next(0) == 3u);
  d.finish(1);
  CHECK(d.next(1) == 1u);
  // A task that preferred the lost rank is anyone's.
  SweepDispatch e({5, 6}, 2);
  e.prefer(5, 1);
  CHECK(e.next(0) == 6u);
  CHECK_FALSE(e.lose(1).has_value());  // it was running nothing
  e.finish(0);
  CHECK(e.next(0) == 5u);
  CHECK_FALSE(e.lose(9).has_value());  // no rank 9: nothing
}
