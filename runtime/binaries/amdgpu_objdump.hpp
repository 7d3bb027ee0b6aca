// Disassembly of an AMDGPU code object by llvm-objdump 22, run as a
// subprocess, for processors LLVM 15's MC layer does not know (gfx950 and
// its new opcodes); the same AmdFunctionCode as amdgpu_disassembler.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/binaries/amdgpu_disassembler.hpp"

namespace kforge {

/// Every function of the code object's .text as `llvm-objdump-22 -d` prints it
/// ($KFORGE_LLVM_OBJDUMP overrides the program). kUnsupported when the program
/// is absent; kBadInput when it fails on the bytes.
Result<std::vector<AmdFunctionCode>> objdump_amdgpu_functions(std::span<const std::uint8_t> code_object);

/// The functions in llvm-objdump's `-d` output: "<address> <symbol>:" opens
/// one, each "\t<instruction>  // <address>: <words>" line adds to it, and
/// an instruction printed as "<unknown>" counts 4 undecoded bytes.
std::vector<AmdFunctionCode> parse_objdump_output(const std::string& text);

}  // namespace kforge
