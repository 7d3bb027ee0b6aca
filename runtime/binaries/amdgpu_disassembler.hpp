// Disassembles the functions of an AMDGPU code object with LLVM's MC layer
// (MCDisassembler + MCInstPrinter for amdgcn): the instructions of each
// STT_FUNC symbol's byte range in .text. Built only with LLVM 15; without it
// every call is kUnsupported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/binaries/elf_image.hpp"

namespace kforge {

struct AmdInstruction {
  std::uint64_t address = 0;  ///< as in the code object (symbol value + offset)
  std::string mnemonic;       ///< e.g. "v_mfma_f32_32x32x8f16", "ds_read_b128"
  std::string text;           ///< the whole printed instruction, operands included
};

struct AmdFunctionCode {
  std::string symbol;  ///< the function's symbol: a kernel's is its metadata .name
  std::uint64_t address = 0;
  std::uint64_t size = 0;  ///< bytes: st_size, or up to the next symbol/end of .text when 0
  std::vector<AmdInstruction> instructions;
  /// Bytes the disassembler could not decode (skipped 4 at a time); 0 for a
  /// code object whose target LLVM 15 knows.
  std::uint64_t undecoded_bytes = 0;
};

/// Every STT_FUNC symbol of `.text`, disassembled for `target_id`, the code
/// object's amdhsa.target ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-") or
/// just a processor ("gfx90a"). kBadInput when the image has no .text or a
/// function lies outside it; kUnsupported for a processor LLVM 15 does not
/// know (gfx950 and later; gfx941 and gfx942 are decoded as gfx940, whose
/// encoding they share) and in a build without LLVM.
Result<std::vector<AmdFunctionCode>> disassemble_amdgpu_functions(const ElfImage& image,
                                                                  const std::string& target_id);

}  // namespace kforge
