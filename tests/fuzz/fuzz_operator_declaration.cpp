// A declared operator's operator.json.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "generator/operator_declaration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)kforge::OperatorDeclaration::parse(text, "fuzz/operator.json");
  return 0;
}
