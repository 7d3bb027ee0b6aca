// A sweep plan (docs/sweep.md) as `kforge sweep` reads it: parsed and
// expanded into its tasks, each task's strategy named, the tasks split into
// shards; and the same bytes as a `--shard I/N` value.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sweep/sweep_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kforge::parse_shard(text);
  auto plan = kforge::parse_sweep_plan(text, "fuzz plan");
  if (!plan.ok()) return 0;
  (void)plan->budget.strategy_to_run();
  for (const auto& task : plan->tasks) (void)task.budget.strategy_to_run();
  for (int count = 1; count <= 3; ++count) {
    for (int index = 1; index <= count; ++index) (void)kforge::shard_tasks(*plan, {index, count});
  }
  return 0;
}
