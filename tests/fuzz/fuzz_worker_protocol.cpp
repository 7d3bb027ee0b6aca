// The messages a worker process and the tuner exchange (a worker that
// crashed mid-write, or anything else on the socket, must not crash the
// tuner): each reader of tuner/worker/worker_protocol.hpp on the same object.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/bounded_json.hpp"
#include "tuner/worker/worker_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = kforge::parse_json_bounded(text, "fuzz message");
  if (!j.ok() || !j->is_object()) return 0;  // the tuner reads objects only (their "type" first)
  (void)kforge::setup_from_json(*j);
  (void)kforge::evaluation_from_json(*j);
  (void)kforge::timing_from_json(*j);
  if (j->is_object() && j->contains("batch")) (void)kforge::refs_from_json((*j)["batch"]);
  return 0;
}
