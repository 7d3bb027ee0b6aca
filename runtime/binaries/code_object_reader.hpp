// Reads GPU binaries with LLVM's object and msgpack libraries: the AMDGPU
// code object's metadata note (per-kernel VGPRs, SGPRs, LDS, scratch,
// wavefront size) and, for any ELF (AMD code objects, NVIDIA cubins), the
// sections and symbols. Built only with LLVM 15 (llvm-15-dev, the LLVM hipRTC
// uses on Debian 12); without it every call is kUnsupported.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

/// One kernel argument in the code object's kernarg segment (.args):
/// explicit ones first, then the runtime's hidden_* ones.
struct AmdKernelArgument {
  std::string value_kind;  ///< (.value_kind) "global_buffer", "by_value", "hidden_block_count_x", ...
  std::int64_t offset = -1;  ///< (.offset)
  std::int64_t bytes = -1;   ///< (.size)
  /// An argument the runtime fills in itself (its value kind begins "hidden_").
  bool hidden() const { return value_kind.rfind("hidden_", 0) == 0; }
};

/// One kernel of an AMDGPU code object (metadata keys in parentheses); -1
/// where the note lacks the key.
struct AmdKernelMetadata {
  std::string name;                          ///< (.name)
  std::string symbol;                        ///< (.symbol), e.g. "k.kd"
  std::int64_t vgpr_count = -1;              ///< architectural VGPRs (.vgpr_count)
  std::int64_t agpr_count = -1;              ///< accumulation VGPRs, gfx908+ (.agpr_count)
  std::int64_t sgpr_count = -1;              ///< (.sgpr_count)
  std::int64_t vgpr_spill_count = -1;        ///< (.vgpr_spill_count)
  std::int64_t sgpr_spill_count = -1;        ///< (.sgpr_spill_count)
  std::int64_t lds_bytes = -1;               ///< static LDS (.group_segment_fixed_size)
  std::int64_t scratch_bytes = -1;           ///< per work-item (.private_segment_fixed_size)
  std::int64_t wavefront_size = -1;          ///< (.wavefront_size)
  std::int64_t max_flat_workgroup_size = -1; ///< launch bound (.max_flat_workgroup_size)
  std::int64_t kernarg_bytes = -1;           ///< (.kernarg_segment_size)
  bool uses_dynamic_stack = false;           ///< (.uses_dynamic_stack)
  std::vector<AmdKernelArgument> arguments;  ///< (.args), in order
};

struct AmdCodeObject {
  std::string target;   ///< (amdhsa.target), e.g. "amdgcn-amd-amdhsa--gfx90a"
  std::string version;  ///< (amdhsa.version), e.g. "1.1"
  std::vector<AmdKernelMetadata> kernels;
  const AmdKernelMetadata* find(const std::string& kernel_name) const;
};

/// Parses the NT_AMDGPU_METADATA note (code object v3+). kBadInput for a
/// buffer that is not an ELF or has no such note, naming what is missing.
Result<AmdCodeObject> read_amd_code_object(std::span<const std::uint8_t> binary);

struct ElfSymbolInfo {
  std::string name;
  std::string section;  ///< name of the section it lives in, empty for undefined
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

struct ElfSectionInfo {
  std::string name;
  std::uint64_t size = 0;
};

struct ElfSummary {
  std::uint16_t machine = 0;  ///< e_machine: 190 EM_CUDA, 224 EM_AMDGPU
  std::vector<ElfSectionInfo> sections;
  std::vector<ElfSymbolInfo> symbols;
};

/// Sections and symbols of a 64-bit little-endian ELF (cubin or code object).
Result<ElfSummary> read_elf_summary(std::span<const std::uint8_t> binary);

/// True when kforge was built with LLVM and the calls above work.
bool code_object_reader_available();

}  // namespace kforge
