// What the CPU clock reader says of other load over bursty windows, the
// shape of a short kernel's timing: THREADS threads spin WORK_MS, then the
// process sleeps SLEEP_MS, and the reader is read after each burst. Prints
// other processes' share of the clock ticks and the share of the wall time
// in which tasks waited for a core, summed as a clock record sums them.
// Run it alone, then beside a busy loop (`while :; do :; done &`), to see
// what each reading sees (docs/measurement.md, "Clocks").
//
//   kforge_bench_load_reading WORK_MS SLEEP_MS [THREADS (default: the cores)] [BURSTS (default 300)]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "runtime/profiling/cpu_clock_reader.hpp"

using namespace kforge;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: kforge_bench_load_reading WORK_MS SLEEP_MS [THREADS] [BURSTS]\n");
    return 2;
  }
  const double work_ms = std::atof(argv[1]), sleep_ms = std::atof(argv[2]);
  const unsigned threads = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3]))
                                    : std::max(1u, std::thread::hardware_concurrency());
  const int bursts = argc > 4 ? std::atoi(argv[4]) : 300;
  auto reader = make_cpu_clock_reader();
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.error().message.c_str());
    return 1;
  }
  double ticks = 0, other = 0, wall_us = 0, wait_us = 0;
  (*reader)->restart();
  for (int b = 0; b < bursts; ++b) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(work_ms);
    std::vector<std::thread> spinners;
    for (unsigned t = 0; t < threads; ++t) {
      spinners.emplace_back([until] {
        while (std::chrono::steady_clock::now() < until) {
        }
      });
    }
    for (auto& t : spinners) t.join();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms));
    auto s = (*reader)->read();
    if (!s.ok()) continue;
    if (s->cpu_ticks > 0 && s->other_cpu_ticks >= 0) {
      ticks += s->cpu_ticks;
      other += s->other_cpu_ticks;
    }
    if (s->wall_us > 0 && s->cpu_wait_us >= 0) {
      wall_us += s->wall_us;
      wait_us += s->cpu_wait_us;
    }
  }
  std::printf("%u threads, %d bursts of %.2f ms, %.2f ms apart: other processes %.3f of %.0f ticks; "
              "tasks waited for a core %.3f of %.0f ms\n",
              threads, bursts, work_ms, sleep_ms, ticks > 0 ? other / ticks : -1.0, ticks,
              wall_us > 0 ? wait_us / wall_us : -1.0, wall_us * 1e-3);
  return 0;
}
