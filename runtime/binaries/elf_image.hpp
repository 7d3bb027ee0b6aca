// A GPU binary's ELF image read with LLVM's object library: header fields,
// every section with its bytes, and the symbol table by ELF index. What
// `kforge inspect` reads cubin attributes and AMDGPU code from. Built only
// with LLVM 15, like code_object_reader; without it every call is kUnsupported.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct ElfImageSection {
  std::string name;
  std::uint32_t type = 0;           ///< sh_type (SHT_NOBITS sections hold no bytes)
  std::uint64_t address = 0;        ///< sh_addr
  std::uint64_t size = 0;           ///< sh_size, also for SHT_NOBITS
  std::uint32_t info = 0;           ///< sh_info
  std::vector<std::uint8_t> bytes;  ///< contents; empty for SHT_NOBITS
};

struct ElfImageSymbol {
  std::string name;
  std::uint8_t type = 0;      ///< STT_* (2 STT_FUNC, 1 STT_OBJECT)
  std::uint8_t binding = 0;   ///< STB_*
  std::uint16_t section = 0;  ///< st_shndx: index into ElfImage::sections (0: undefined)
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

struct ElfImage {
  std::uint16_t machine = 0;              ///< e_machine: 190 EM_CUDA, 224 EM_AMDGPU
  std::uint32_t flags = 0;                ///< e_flags (cubin: SM version; AMDGPU: EF_AMDGPU_MACH)
  std::uint8_t abi_version = 0;           ///< e_ident[EI_ABIVERSION]
  std::vector<ElfImageSection> sections;  ///< by section index; [0] is the null section
  std::vector<ElfImageSymbol> symbols;    ///< .symtab by symbol index; [0] is the null symbol
  /// The section named `name`, or nullptr.
  const ElfImageSection* section(const std::string& name) const;
};

/// Reads a 64-bit little-endian ELF; kBadInput (naming what is wrong, e.g. a
/// section past the end of a truncated file) for anything else.
Result<ElfImage> read_elf_image(std::span<const std::uint8_t> binary);

}  // namespace kforge
