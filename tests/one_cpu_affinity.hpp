// Pins the calling thread to the first CPU it may use, and restores its
// affinity when it goes out of scope: tests of what a pinned process sees.
#pragma once

#include <sched.h>

namespace kforge::test {

class OneCpuAffinity {
 public:
  OneCpuAffinity() {
    CPU_ZERO(&before_);
    if (sched_getaffinity(0, sizeof(before_), &before_) != 0) return;
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &before_)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    pinned_ = sched_setaffinity(0, sizeof(one), &one) == 0;
  }
  ~OneCpuAffinity() {
    if (pinned_) sched_setaffinity(0, sizeof(before_), &before_);
  }
  OneCpuAffinity(const OneCpuAffinity&) = delete;
  OneCpuAffinity& operator=(const OneCpuAffinity&) = delete;

  /// Whether the thread is pinned now.
  bool pinned() const { return pinned_; }
  /// How many CPUs the thread could use before.
  int cpus_before() const { return CPU_COUNT(&before_); }

 private:
  cpu_set_t before_;
  bool pinned_ = false;
};

}  // namespace kforge::test
