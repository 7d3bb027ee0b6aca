// A declared operator's .npy inputs and expected outputs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "generator/npy_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)kforge::parse_npy(bytes, "fuzz.npy");
  return 0;
}
