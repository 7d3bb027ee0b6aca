// LLVM MC disassembly of AMDGPU code object functions.
#include "runtime/binaries/amdgpu_disassembler.hpp"

#include <algorithm>
#include <cctype>

#ifdef KFORGE_HAVE_LLVM
#include <llvm-c/Target.h>
#include <llvm/BinaryFormat/ELF.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>
#include <mutex>
#endif

#include "runtime/binaries/amd_target_id.hpp"

namespace kforge {

#ifdef KFORGE_HAVE_LLVM

namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";

/// The processor LLVM 15 disassembles `id`'s code as, and its features.
std::pair<std::string, std::string> split_target_id(const std::string& id) {
  AmdTargetId t = parse_amd_target_id(id);
  // LLVM 15 stops at gfx940; gfx941 and gfx942 share its encoding (a gfx942
  // object decodes to the same 781 of 781 instructions as llvm-objdump-22's).
  if (t.processor == "gfx941" || t.processor == "gfx942") t.processor = "gfx940";
  return {t.processor, t.features};
}

std::string first_token(const std::string& s) {
  auto b = std::find_if(s.begin(), s.end(), [](unsigned char c) { return !std::isspace(c); });
  auto e = std::find_if(b, s.end(), [](unsigned char c) { return std::isspace(c); });
  return {b, e};
}

/// The MC objects for one processor, created together and used for one code object.
struct McTools {
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> dis;
  std::unique_ptr<llvm::MCInstPrinter> printer;
};

Result<McTools> make_tools(const std::string& cpu, const std::string& features) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!target) return Error{ErrorCode::kUnsupported, "LLVM has no amdgcn target: " + err, {}};
  McTools t;
  t.mri.reset(target->createMCRegInfo(kTriple));
  llvm::MCTargetOptions options;
  t.mai.reset(target->createMCAsmInfo(*t.mri, kTriple, options));
  std::unique_ptr<llvm::MCSubtargetInfo> probe(target->createMCSubtargetInfo(kTriple, "", ""));
  if (!probe || !probe->isCPUStringValid(cpu))
    return Error{ErrorCode::kUnsupported, "processor '" + cpu + "' is not one LLVM 15 can disassemble", {}};
  t.sti.reset(target->createMCSubtargetInfo(kTriple, cpu, features));
  t.mii.reset(target->createMCInstrInfo());
  if (!t.mri || !t.mai || !t.sti || !t.mii)
    return Error::internal("LLVM: cannot create the amdgcn MC objects");
  t.ctx = std::make_unique<llvm::MCContext>(llvm::Triple(kTriple), t.mai.get(), t.mri.get(), t.sti.get());
  t.dis.reset(target->createMCDisassembler(*t.sti, *t.ctx));
  t.printer.reset(target->createMCInstPrinter(llvm::Triple(kTriple), t.mai->getAssemblerDialect(), *t.mai,
                                              *t.mii, *t.mri));
  if (!t.dis || !t.printer) return Error::internal("LLVM: cannot create the amdgcn disassembler");
  return t;
}

void disassemble_range(McTools& t, const std::vector<std::uint8_t>& text, std::uint64_t text_address,
                       AmdFunctionCode& fn) {
  std::uint64_t offset = fn.address - text_address;
  const std::uint64_t end = offset + fn.size;
  while (offset < end) {
    llvm::MCInst inst;
    std::uint64_t size = 0;
    const llvm::ArrayRef<std::uint8_t> bytes(text.data() + offset, end - offset);
    const std::uint64_t address = text_address + offset;
    const auto status = t.dis->getInstruction(inst, size, bytes, address, llvm::nulls());
    if (status == llvm::MCDisassembler::Fail || size == 0) {
      const std::uint64_t skip = std::min<std::uint64_t>(4, end - offset);
      fn.undecoded_bytes += skip;
      offset += skip;
      continue;
    }
    std::string printed;
    llvm::raw_string_ostream os(printed);
    t.printer->printInst(&inst, address, "", *t.sti, os);
    os.flush();
    const auto start = printed.find_first_not_of(" \t");
    fn.instructions.push_back(
        {address, first_token(printed), start == std::string::npos ? "" : printed.substr(start)});
    offset += size;
  }
}

}  // namespace

Result<std::vector<AmdFunctionCode>> disassemble_amdgpu_functions(const ElfImage& image,
                                                                  const std::string& target_id) {
  std::size_t text_index = 0;
  for (std::size_t i = 0; i < image.sections.size(); ++i)
    if (image.sections[i].name == ".text") text_index = i;
  if (text_index == 0) return Error::bad_input("code object: no .text section");
  const ElfImageSection& text = image.sections[text_index];
  if (text.bytes.size() != text.size) return Error::bad_input("code object: .text holds no bytes");

  auto [cpu, features] = split_target_id(target_id);
  KF_TRY_ASSIGN(tools, make_tools(cpu, features));

  // Functions of .text in address order; a zero st_size runs to the next one.
  std::vector<const ElfImageSymbol*> funcs;
  for (const auto& s : image.symbols)
    if (s.type == llvm::ELF::STT_FUNC && s.section == text_index && !s.name.empty()) funcs.push_back(&s);
  std::sort(funcs.begin(), funcs.end(), [](auto* a, auto* b) { return a->value < b->value; });
  std::vector<AmdFunctionCode> out;
  const std::uint64_t text_end = text.address + text.size;
  for (std::size_t i = 0; i < funcs.size(); ++i) {
    const ElfImageSymbol& s = *funcs[i];
    if (s.value < text.address || s.value >= text_end)
      return Error::bad_input("code object: symbol " + s.name + " lies outside .text");
    AmdFunctionCode fn;
    fn.symbol = s.name;
    fn.address = s.value;
    const std::uint64_t limit = i + 1 < funcs.size() ? funcs[i + 1]->value : text_end;
    fn.size = s.size ? std::min(s.size, text_end - s.value) : limit - s.value;
    disassemble_range(tools, text.bytes, text.address, fn);
    out.push_back(std::move(fn));
  }
  return out;
}

#else  // !KFORGE_HAVE_LLVM

Result<std::vector<AmdFunctionCode>> disassemble_amdgpu_functions(const ElfImage&, const std::string&) {
  return Error{ErrorCode::kUnsupported,
               "kforge was built without LLVM 15 (llvm-15-dev), so it cannot disassemble code objects",
               {}};
}

#endif

}  // namespace kforge
