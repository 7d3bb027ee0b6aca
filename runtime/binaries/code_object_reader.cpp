// LLVM-backed reader of AMDGPU code object metadata and ELF summaries.
#include "runtime/binaries/code_object_reader.hpp"

#ifdef KFORGE_HAVE_LLVM
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#endif

namespace kforge {

const AmdKernelMetadata* AmdCodeObject::find(const std::string& kernel_name) const {
  for (const auto& k : kernels)
    if (k.name == kernel_name) return &k;
  return nullptr;
}

#ifdef KFORGE_HAVE_LLVM

namespace {

using ElfFile = llvm::object::ELF64LEObjectFile;

std::string take_error(llvm::Error e) { return llvm::toString(std::move(e)); }

Result<std::unique_ptr<ElfFile>> open_elf(std::span<const std::uint8_t> binary) {
  llvm::MemoryBufferRef ref(llvm::StringRef(reinterpret_cast<const char*>(binary.data()), binary.size()),
                            "code object");
  auto obj = llvm::object::ObjectFile::createELFObjectFile(ref);
  if (!obj) return Error::bad_input("not an ELF code object: " + take_error(obj.takeError()));
  auto* elf = llvm::dyn_cast<ElfFile>(obj->get());
  if (!elf) return Error::bad_input("not a 64-bit little-endian ELF code object");
  obj->release();
  return std::unique_ptr<ElfFile>(elf);
}

std::int64_t int_of(llvm::msgpack::MapDocNode& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end()) return -1;
  const auto& n = it->second;
  if (n.getKind() == llvm::msgpack::Type::UInt) return static_cast<std::int64_t>(n.getUInt());
  if (n.getKind() == llvm::msgpack::Type::Int) return n.getInt();
  return -1;
}

std::string string_of(llvm::msgpack::MapDocNode& m, const char* key) {
  auto it = m.find(key);
  if (it == m.end() || it->second.getKind() != llvm::msgpack::Type::String) return {};
  return it->second.getString().str();
}

std::vector<AmdKernelArgument> arguments_of(llvm::msgpack::MapDocNode& m) {
  std::vector<AmdKernelArgument> out;
  auto it = m.find(".args");
  if (it == m.end() || it->second.getKind() != llvm::msgpack::Type::Array) return out;
  for (auto& node : it->second.getArray()) {
    if (node.getKind() != llvm::msgpack::Type::Map) continue;
    auto& a = node.getMap();
    out.push_back({string_of(a, ".value_kind"), int_of(a, ".offset"), int_of(a, ".size")});
  }
  return out;
}

}  // namespace

bool code_object_reader_available() { return true; }

Result<AmdCodeObject> read_amd_code_object(std::span<const std::uint8_t> binary) {
  KF_TRY_ASSIGN(elf, open_elf(binary));
  const auto& file = elf->getELFFile();
  auto sections = file.sections();
  if (!sections) return Error::bad_input("code object: " + take_error(sections.takeError()));
  for (const auto& sec : *sections) {
    if (sec.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : file.notes(sec, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      auto desc = note.getDesc();
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false)) {
        llvm::consumeError(std::move(err));
        return Error::bad_input("code object: the AMDGPU metadata note is not valid msgpack");
      }
      if (doc.getRoot().getKind() != llvm::msgpack::Type::Map) {
        llvm::consumeError(std::move(err));
        return Error::bad_input("code object: the AMDGPU metadata note is not a map");
      }
      AmdCodeObject out;
      auto& root = doc.getRoot().getMap();
      out.target = string_of(root, "amdhsa.target");
      if (auto v = root.find("amdhsa.version");
          v != root.end() && v->second.getKind() == llvm::msgpack::Type::Array) {
        auto& arr = v->second.getArray();
        for (std::size_t i = 0; i < arr.size(); ++i) {
          if (arr[i].getKind() == llvm::msgpack::Type::UInt)
            out.version += (i ? "." : "") + std::to_string(arr[i].getUInt());
        }
      }
      if (auto ks = root.find("amdhsa.kernels");
          ks != root.end() && ks->second.getKind() == llvm::msgpack::Type::Array) {
        for (auto& node : ks->second.getArray()) {
          if (node.getKind() != llvm::msgpack::Type::Map) continue;
          auto& m = node.getMap();
          AmdKernelMetadata k;
          k.name = string_of(m, ".name");
          k.symbol = string_of(m, ".symbol");
          k.vgpr_count = int_of(m, ".vgpr_count");
          k.agpr_count = int_of(m, ".agpr_count");
          k.sgpr_count = int_of(m, ".sgpr_count");
          k.vgpr_spill_count = int_of(m, ".vgpr_spill_count");
          k.sgpr_spill_count = int_of(m, ".sgpr_spill_count");
          k.lds_bytes = int_of(m, ".group_segment_fixed_size");
          k.scratch_bytes = int_of(m, ".private_segment_fixed_size");
          k.wavefront_size = int_of(m, ".wavefront_size");
          k.max_flat_workgroup_size = int_of(m, ".max_flat_workgroup_size");
          k.kernarg_bytes = int_of(m, ".kernarg_segment_size");
          if (auto d = m.find(".uses_dynamic_stack");
              d != m.end() && d->second.getKind() == llvm::msgpack::Type::Boolean)
            k.uses_dynamic_stack = d->second.getBool();
          k.arguments = arguments_of(m);
          out.kernels.push_back(std::move(k));
        }
      }
      llvm::consumeError(std::move(err));
      return out;
    }
    if (err) return Error::bad_input("code object: " + take_error(std::move(err)));
  }
  return Error::bad_input("code object: no NT_AMDGPU_METADATA note (not an AMDGPU code object v3+)");
}

Result<ElfSummary> read_elf_summary(std::span<const std::uint8_t> binary) {
  KF_TRY_ASSIGN(elf, open_elf(binary));
  ElfSummary s;
  s.machine = elf->getELFFile().getHeader().e_machine;
  for (const auto& sec : elf->sections()) {
    auto name = sec.getName();
    s.sections.push_back({name ? name->str() : std::string(), sec.getSize()});
    if (!name) llvm::consumeError(name.takeError());
  }
  for (const auto& sym : elf->symbols()) {
    ElfSymbolInfo info;
    if (auto n = sym.getName()) info.name = n->str();
    else llvm::consumeError(n.takeError());
    if (auto v = sym.getValue()) info.value = *v;
    else llvm::consumeError(v.takeError());
    info.size = llvm::object::ELFSymbolRef(sym).getSize();
    if (auto sec = sym.getSection(); sec && *sec != elf->section_end()) {
      if (auto sn = (*sec)->getName()) info.section = sn->str();
      else llvm::consumeError(sn.takeError());
    } else if (!sec) {
      llvm::consumeError(sec.takeError());
    }
    s.symbols.push_back(std::move(info));
  }
  return s;
}

#else  // !KFORGE_HAVE_LLVM

namespace {
Error no_llvm() {
  return Error{ErrorCode::kUnsupported,
               "kforge was built without LLVM 15 (llvm-15-dev), so it cannot read code objects", {}};
}
}  // namespace

bool code_object_reader_available() { return false; }
Result<AmdCodeObject> read_amd_code_object(std::span<const std::uint8_t>) { return no_llvm(); }
Result<ElfSummary> read_elf_summary(std::span<const std::uint8_t>) { return no_llvm(); }

#endif

}  // namespace kforge
