// LLVM-backed reader of a 64-bit little-endian ELF's sections and symbols.
#include "runtime/binaries/elf_image.hpp"

#ifdef KFORGE_HAVE_LLVM
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/Object/ELF.h>
#include <llvm/Support/Error.h>
#endif

namespace kforge {

const ElfImageSection* ElfImage::section(const std::string& name) const {
  for (const auto& s : sections)
    if (s.name == name) return &s;
  return nullptr;
}

#ifdef KFORGE_HAVE_LLVM

namespace {

Error elf_error(const std::string& what, llvm::Error e) {
  return Error::bad_input("ELF: " + what + ": " + llvm::toString(std::move(e)));
}

}  // namespace

Result<ElfImage> read_elf_image(std::span<const std::uint8_t> binary) {
  using ElfFile = llvm::object::ELFFile<llvm::object::ELF64LE>;
  const llvm::StringRef bytes(reinterpret_cast<const char*>(binary.data()), binary.size());
  if (binary.size() < llvm::ELF::EI_NIDENT || bytes.substr(0, 4) !=
                                                  "\x7f"
                                                  "ELF")
    return Error::bad_input("ELF: no ELF header (the file does not start with \\x7fELF)");
  if (binary[llvm::ELF::EI_CLASS] != llvm::ELF::ELFCLASS64 ||
      binary[llvm::ELF::EI_DATA] != llvm::ELF::ELFDATA2LSB)
    return Error::bad_input("ELF: not a 64-bit little-endian ELF");
  auto file = ElfFile::create(bytes);
  if (!file) return elf_error("header", file.takeError());
  const auto& header = file->getHeader();
  ElfImage image;
  image.machine = header.e_machine;
  image.flags = header.e_flags;
  image.abi_version = header.e_ident[llvm::ELF::EI_ABIVERSION];

  auto sections = file->sections();
  if (!sections) return elf_error("section headers", sections.takeError());
  const ElfFile::Elf_Shdr* symtab = nullptr;
  for (const auto& sec : *sections) {
    ElfImageSection s;
    auto name = file->getSectionName(sec);
    if (!name) return elf_error("section name", name.takeError());
    s.name = name->str();
    s.type = sec.sh_type;
    s.address = sec.sh_addr;
    s.size = sec.sh_size;
    s.info = sec.sh_info;
    if (sec.sh_type != llvm::ELF::SHT_NOBITS && sec.sh_type != llvm::ELF::SHT_NULL) {
      auto contents = file->getSectionContents(sec);
      if (!contents) return elf_error("section " + s.name, contents.takeError());
      s.bytes.assign(contents->begin(), contents->end());
    }
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB) symtab = &sec;
    image.sections.push_back(std::move(s));
  }
  if (!symtab) return image;
  auto strtab = file->getStringTableForSymtab(*symtab);
  if (!strtab) return elf_error("symbol names", strtab.takeError());
  auto symbols = file->symbols(symtab);
  if (!symbols) return elf_error("symbol table", symbols.takeError());
  for (const auto& sym : *symbols) {
    ElfImageSymbol s;
    auto name = sym.getName(*strtab);
    if (!name) return elf_error("symbol name", name.takeError());
    s.name = name->str();
    s.type = sym.getType();
    s.binding = sym.getBinding();
    s.section = sym.st_shndx;
    s.value = sym.st_value;
    s.size = sym.st_size;
    image.symbols.push_back(std::move(s));
  }
  return image;
}

#else  // !KFORGE_HAVE_LLVM

Result<ElfImage> read_elf_image(std::span<const std::uint8_t>) {
  return Error{ErrorCode::kUnsupported,
               "kforge was built without LLVM 15 (llvm-15-dev), so it cannot read ELF files",
               {}};
}

#endif

}  // namespace kforge
