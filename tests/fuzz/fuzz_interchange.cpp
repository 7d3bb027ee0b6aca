// A tuning-data document in the JSON interchange format (docs/export.md), as
// `kforge import` reads it before anything reaches the database.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "db/json_interchange.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kforge::parse_interchange_json(text, "fuzz.json");
  return 0;
}
