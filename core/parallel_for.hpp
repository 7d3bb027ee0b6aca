// Runs fn(i) for i in [0, count) on the host's cores, for the references of
// large problems: a 4096^3 GEMM reference is 7e10 multiply-adds, minutes on one
// core, and every tuning worker computes it at start-up.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <thread>
#include <vector>

namespace kforge {

/// Threads parallel_for uses by default: KFORGE_HOST_THREADS when set to a
/// positive number (to share a machine, or to check that a result does not
/// depend on the thread count), else one per hardware thread.
inline unsigned host_threads() {
  if (const char* env = std::getenv("KFORGE_HOST_THREADS")) {
    const long n = std::strtol(env, nullptr, 10);
    if (n > 0) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// Calls fn(i) once for every i in [0, count), on up to `max_threads` threads
/// (0: host_threads()) taking indices in turn, so uneven items balance.
/// fn must not throw; items must be independent. With one thread or one item it
/// runs on the calling thread.
template <class Fn>
void parallel_for(std::size_t count, Fn&& fn, unsigned max_threads = 0) {
  unsigned threads = max_threads ? max_threads : host_threads();
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace kforge
