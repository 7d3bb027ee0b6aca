// ResourceReport serialization (the backend interface itself is header-only).
#include "runtime/device/backend.hpp"

namespace kforge {

nlohmann::json ResourceReport::to_json() const {
  // Fields a compiler cannot report stay -1 and are written as such, so a
  // reader can tell "unknown" from "zero".
  nlohmann::json j{{"registers", registers},
                   {"local_mem_bytes", local_mem_bytes},
                   {"private_mem_bytes", private_mem_bytes},
                   {"spill_stores", spill_stores},
                   {"spill_loads", spill_loads},
                   {"max_block_threads", max_block_threads}};
  for (const auto& d : diagnostics) {
    j["diagnostics"].push_back(
        {{"code", d.code}, {"message", d.message}, {"serializes_tensor_ops", d.serializes_tensor_ops}});
  }
  return j;
}

}  // namespace kforge
