// LLVM-backed reader of AMDGPU code object metadata and ELF summaries.
#include "runtime/binaries/code_object_reader.hpp"

#include "runtime/binaries/elf_image.hpp"

#ifdef KFORGE_HAVE_LLVM
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/BinaryFormat/MsgPackReader.h>
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

/// Whether Document::readFromBlob can read a msgpack blob safely: its arrays
/// and maps declare no more elements than it has bytes (an element takes one
/// at least; readFromBlob allocates what a header declares, so a note of a few
/// bytes declaring 2^32 elements would ask for gigabytes), and every map key is
/// a scalar (comparing two array, map or extension keys is llvm_unreachable,
/// undefined behaviour in a release build of LLVM).
bool msgpack_readable(llvm::StringRef blob) {
  using llvm::msgpack::Type;
  struct Open {
    std::uint64_t left;  ///< elements still to read; a map's keys are at even counts
    bool map;
  };
  std::vector<Open> open;
  std::uint64_t declared = 0;
  llvm::msgpack::Reader reader(blob);
  for (;;) {
    llvm::msgpack::Object obj;
    auto more = reader.read(obj);
    if (!more) {
      llvm::consumeError(more.takeError());
      return false;
    }
    if (!*more) return true;
    const bool container = obj.Kind == Type::Array || obj.Kind == Type::Map;
    if (!open.empty()) {
      const bool key = open.back().map && open.back().left % 2 == 0;
      if (key && (container || obj.Kind == Type::Extension)) return false;
      --open.back().left;
    }
    if (container) {
      const std::uint64_t elements = std::uint64_t{obj.Length} * (obj.Kind == Type::Map ? 2 : 1);
      declared += elements;
      if (declared > blob.size()) return false;
      open.push_back({elements, obj.Kind == Type::Map});
    }
    while (!open.empty() && open.back().left == 0) open.pop_back();
  }
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
      const llvm::StringRef blob(reinterpret_cast<const char*>(desc.data()), desc.size());
      llvm::msgpack::Document doc;
      if (!msgpack_readable(blob) || !doc.readFromBlob(blob, false)) {
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

#else  // !KFORGE_HAVE_LLVM

namespace {
Error no_llvm() {
  return Error{ErrorCode::kUnsupported,
               "kforge was built without LLVM 15 (llvm-15-dev), so it cannot read code objects", {}};
}
}  // namespace

bool code_object_reader_available() { return false; }
Result<AmdCodeObject> read_amd_code_object(std::span<const std::uint8_t>) { return no_llvm(); }

#endif

// Read through read_elf_image: ELFObjectFile's symbol accessors end the
// process (report_fatal_error) on a symbol table whose entry size or bounds
// are wrong, where ELFFile's checked ones return an error.
Result<ElfSummary> read_elf_summary(std::span<const std::uint8_t> binary) {
  KF_TRY_ASSIGN(image, read_elf_image(binary));
  ElfSummary s;
  s.machine = image.machine;
  for (const auto& sec : image.sections) s.sections.push_back({sec.name, sec.size});
  // Symbol 0 is the null symbol; section indices from 0xff00 up are special (absolute, common).
  constexpr std::uint16_t kFirstReservedIndex = 0xff00;
  for (std::size_t i = 1; i < image.symbols.size(); ++i) {
    const auto& sym = image.symbols[i];
    const bool defined = sym.section != 0 && sym.section < kFirstReservedIndex;
    ElfSymbolInfo info{sym.name, {}, sym.section == 0 ? 0 : sym.value, sym.size};
    if (defined && sym.section < image.sections.size()) info.section = image.sections[sym.section].name;
    s.symbols.push_back(std::move(info));
  }
  return s;
}

}  // namespace kforge
