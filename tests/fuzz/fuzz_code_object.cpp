// An AMDGPU code object's bytes, as `kforge inspect` and the HIP resource
// reports read them: the metadata note, the target id it names, and the ELF
// summary of sections and symbols.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/binaries/amd_target_id.hpp"
#include "runtime/binaries/code_object_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span bytes(data, size);
  if (const auto co = kforge::read_amd_code_object(bytes)) (void)kforge::parse_amd_target_id(co->target);
  (void)kforge::read_elf_summary(bytes);
  // A target id also comes as text (a compiler's --offload-arch, Triton's target).
  (void)kforge::parse_amd_target_id(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
