// PTX text (NVRTC's and Triton's), as the compile-only reports read it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/binaries/ptx_module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kforge::looks_like_ptx(text);
  (void)kforge::parse_ptx(text);
  return 0;
}
