// Disassembles a CUDA cubin's kernels into SASS with NVIDIA's nvdisasm, so
// that a test or `kforge inspect` can see which instructions the compiler
// really emitted (HMMA or HGMMA, LDSM, UTMALDG) without a GPU. nvdisasm is
// not in every toolkit install; PyPI has it (nvidia-cuda-nvdisasm).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct SassInstruction {
  std::uint64_t offset = 0;  ///< from the function's start, as nvdisasm prints it
  std::string mnemonic;      ///< the opcode with its modifiers: "HMMA.16816.F32.BF16", "LDSM.16.M88.4"
  std::string text;          ///< the whole instruction, predicate and operands included
};

struct SassFunction {
  std::string name;  ///< the kernel's symbol
  std::vector<SassInstruction> instructions;
};

/// The nvdisasm to run: $KFORGE_NVDISASM when set (kBadInput when it is not an
/// executable file), else `nvdisasm` in $CUDA_PATH/bin, $CUDA_HOME/bin,
/// /usr/local/cuda/bin or on $PATH. kNotFound, saying how to get it, otherwise.
Result<std::string> find_nvdisasm();

/// The functions of nvdisasm's output, in order: each `.text.<name>:` section
/// and its `/*offset*/ [@P] OPCODE operands ;` lines, less the NOPs that pad
/// its end. kBadInput for text with no function in it.
Result<std::vector<SassFunction>> parse_sass(std::string_view listing);

/// `cubin` disassembled by find_nvdisasm()'s nvdisasm. kNotFound without
/// one; kBadInput, with nvdisasm's message, for bytes it cannot read.
Result<std::vector<SassFunction>> disassemble_sass(std::span<const std::uint8_t> cubin);

}  // namespace kforge
