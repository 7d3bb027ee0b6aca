// A problem as JSON (tuning sets, workload traces, the JSON interchange).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/bounded_json.hpp"
#include "generator/problem_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = kforge::parse_json_bounded(text, "fuzz problem");
  if (j.ok()) (void)kforge::problem_from_json(*j, "fuzz problem");
  return 0;
}
