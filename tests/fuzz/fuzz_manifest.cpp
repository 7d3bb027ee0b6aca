// A template's manifest.json (C++ and Triton kinds), and each parsed
// manifest's default configuration checked against its declaration.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "generator/manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto m = kforge::TemplateManifest::parse(text, "fuzz/manifest.json");
  if (m.ok()) (void)m->check_declared(m->default_config());
  return 0;
}
