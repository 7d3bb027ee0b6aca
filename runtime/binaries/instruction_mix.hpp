// Instruction mix of a kernel: its instructions counted by category (tensor
// ops, global and shared/LDS memory, waits and barriers, branches, ALU) for
// amdgcn mnemonics, PTX opcodes or SASS opcodes, with the most frequent
// mnemonics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge {

enum class Isa { kAmdgcn, kPtx, kSass };

struct InstructionMix {
  /// Every category of the ISA in a fixed order (mix_categories), zeros included.
  std::vector<std::pair<std::string, std::int64_t>> categories;
  std::int64_t total = 0;
  /// The most frequent mnemonics, most frequent first (ties by name).
  std::vector<std::pair<std::string, std::int64_t>> top_mnemonics;
  /// The count of `category`; 0 for a name that is not a category.
  std::int64_t count(std::string_view category) const;
};

/// The category names of an ISA, in report order; docs/inspect.md defines each.
const std::vector<std::string>& mix_categories(Isa isa);

/// The category of one amdgcn mnemonic ("v_mfma_f32_32x32x8f16" -> "mfma").
std::string amdgcn_category(std::string_view mnemonic);
/// The category of one PTX opcode with its modifiers ("ld.global.nc.v4.u32" -> "ld_global").
std::string ptx_category(std::string_view opcode);
/// The category of one SASS opcode with its modifiers ("HGMMA.64x128x16.F32.BF16" -> "mma").
std::string sass_category(std::string_view opcode);

/// Counts `mnemonics` (one per instruction) by category; keeps the `top_n` most frequent.
InstructionMix tally_mix(Isa isa, const std::vector<std::string>& mnemonics, std::size_t top_n = 10);

}  // namespace kforge
