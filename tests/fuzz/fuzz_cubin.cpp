// A CUDA cubin's bytes, as `kforge inspect` reads them: the ELF image, then
// the kernels' EIATTR records and section sizes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/elf_image.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto image = kforge::read_elf_image(std::span(data, size));
  if (!image) return 0;
  (void)kforge::read_cubin_info(*image);
  return 0;
}
