// Device limits as expression names.
#include "generator/device_limits.hpp"

namespace kforge {

void DeviceLimits::add_to(Env& env) const {
  env["max_block_threads"] = max_block_threads;
  env["local_mem_bytes"] = local_mem_bytes;
  env["max_shared_bytes"] = max_shared_bytes;
  env["compute_units"] = compute_units;
  env["simd_width"] = simd_width;
}

}  // namespace kforge
