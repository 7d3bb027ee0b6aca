// EIATTR records of a cubin's .nv.info sections, decoded into per-kernel resources.
#include "runtime/binaries/cubin_attributes.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kforge {

namespace {

// Attribute ids (the second byte of a record) that kforge decodes.
constexpr std::uint8_t kMaxThreads = 0x05, kParamCbank = 0x0a, kReqNtid = 0x10, kFrameSize = 0x11,
                       kMinStackSize = 0x12, kKparamInfo = 0x17, kCbankParamSize = 0x19, kMaxRegCount = 0x1b,
                       kCrsStackSize = 0x1e, kMaxStackSize = 0x23, kRegCount = 0x2f, kCudaApiVersion = 0x37;
// Record formats (the first byte).
constexpr std::int64_t kReservedSharedBytes = 1024;
constexpr std::uint8_t kNoValue = 1, kByteValue = 2, kHalfValue = 3, kSizedValue = 4;

std::uint32_t u32_at(const std::vector<std::uint8_t>& p, std::size_t at) {
  if (p.size() < at + 4) return 0;
  return static_cast<std::uint32_t>(p[at]) | static_cast<std::uint32_t>(p[at + 1]) << 8 |
         static_cast<std::uint32_t>(p[at + 2]) << 16 | static_cast<std::uint32_t>(p[at + 3]) << 24;
}

std::uint16_t u16_at(const std::vector<std::uint8_t>& p, std::size_t at) {
  if (p.size() < at + 2) return 0;
  return static_cast<std::uint16_t>(p[at] | p[at + 1] << 8);
}

Result<std::vector<EiattrRecord>> read_records(const ElfImageSection& s) {
  std::vector<EiattrRecord> out;
  const auto& b = s.bytes;
  std::size_t at = 0;
  while (at < b.size()) {
    if (at + 4 > b.size())
      return Error::bad_input("cubin: " + s.name + ": record at offset " + std::to_string(at) +
                              " is cut short (" + std::to_string(b.size() - at) + " of 4 header bytes)");
    EiattrRecord r;
    r.format = b[at];
    r.attribute = b[at + 1];
    r.name = eiattr_name(r.attribute);
    switch (r.format) {
      case kNoValue:
        break;
      case kByteValue:
        r.value = b[at + 2];
        break;
      case kHalfValue:
        r.value = static_cast<std::uint32_t>(b[at + 2] | b[at + 3] << 8);
        break;
      case kSizedValue: {
        r.value = static_cast<std::uint32_t>(b[at + 2] | b[at + 3] << 8);
        if (at + 4 + r.value > b.size())
          return Error::bad_input("cubin: " + s.name + ": " + r.name + " at offset " + std::to_string(at) +
                                  " declares " + std::to_string(r.value) +
                                  " bytes, past the end of the section (" + std::to_string(b.size()) +
                                  " bytes)");
        r.payload.assign(b.begin() + static_cast<std::ptrdiff_t>(at + 4),
                         b.begin() + static_cast<std::ptrdiff_t>(at + 4 + r.value));
        at += r.value;
        break;
      }
      default:
        return Error::bad_input("cubin: " + s.name + ": record at offset " + std::to_string(at) +
                                " has unknown format " + std::to_string(r.format));
    }
    at += 4;
    out.push_back(std::move(r));
  }
  return out;
}

std::array<std::int64_t, 3> three(const std::vector<std::uint8_t>& p) {
  return {u32_at(p, 0), u32_at(p, 4), u32_at(p, 8)};
}

/// Applies a record of the kernel's own .nv.info.<kernel> section.
void apply_kernel_record(CubinKernel& k, const EiattrRecord& r) {
  switch (r.attribute) {
    case kMaxThreads:
      if (r.payload.size() >= 12) k.max_threads = three(r.payload);
      break;
    case kReqNtid:
      if (r.payload.size() >= 12) k.req_threads = three(r.payload);
      break;
    case kParamCbank:  // symbol index of .nv.constant0.<kernel>, then offset and size in 16 bits each
      if (r.payload.size() >= 8) {
        k.param_cbank_offset = u16_at(r.payload, 4);
        k.param_cbank_bytes = u16_at(r.payload, 6);
      }
      break;
    case kKparamInfo:  // index (32 bits), ordinal and offset (16 each), then size in bits 18-31
      if (r.payload.size() >= 12)
        k.parameters.push_back({u16_at(r.payload, 4), u16_at(r.payload, 6),
                                static_cast<int>(u32_at(r.payload, 8) >> 18)});
      break;
    case kCbankParamSize:
      k.cbank_param_bytes = r.value;
      break;
    case kMaxRegCount:
      k.max_registers = r.value;
      break;
    case kCrsStackSize:
      if (r.payload.size() >= 4) k.crs_stack_bytes = u32_at(r.payload, 0);
      break;
    case kCudaApiVersion:
      if (r.payload.size() >= 4) k.cuda_api_version = u32_at(r.payload, 0);
      break;
    default:
      break;
  }
}

/// Applies a per-function record of .nv.info (symbol index, then a 32-bit value).
void apply_function_record(CubinKernel& k, const EiattrRecord& r) {
  const std::int64_t v = u32_at(r.payload, 4);
  switch (r.attribute) {
    case kRegCount:
      k.registers = v;
      break;
    case kMaxStackSize:
      k.max_stack_bytes = v;
      break;
    case kFrameSize:
      k.frame_bytes = v;
      break;
    case kMinStackSize:
      k.min_stack_bytes = v;
      break;
    default:
      break;
  }
}

}  // namespace

std::string eiattr_name(std::uint8_t a) {
  static const char* const kNames[] = {"ERROR",
                                       "PAD",
                                       "IMAGE_SLOT",
                                       "JUMPTABLE_RELOCS",
                                       "CTAIDZ_USED",
                                       "MAX_THREADS",
                                       "IMAGE_OFFSET",
                                       "IMAGE_SIZE",
                                       "TEXTURE_NORMALIZED",
                                       "SAMPLER_INIT",
                                       "PARAM_CBANK",
                                       "SMEM_PARAM_OFFSETS",
                                       "CBANK_PARAM_OFFSETS",
                                       "SYNC_STACK",
                                       "TEXID_SAMPID_MAP",
                                       "EXTERNS",
                                       "REQNTID",
                                       "FRAME_SIZE",
                                       "MIN_STACK_SIZE",
                                       "SAMPLER_FORCE_UNNORMALIZED",
                                       "BINDLESS_IMAGE_OFFSETS",
                                       "BINDLESS_TEXTURE_BANK",
                                       "BINDLESS_SURFACE_BANK",
                                       "KPARAM_INFO",
                                       "SMEM_PARAM_SIZE",
                                       "CBANK_PARAM_SIZE",
                                       "QUERY_NUMATTRIB",
                                       "MAXREG_COUNT",
                                       "EXIT_INSTR_OFFSETS",
                                       "S2RCTAID_INSTR_OFFSETS",
                                       "CRS_STACK_SIZE",
                                       "NEED_CNP_WRAPPER",
                                       "NEED_CNP_PATCH",
                                       "EXPLICIT_CACHING",
                                       "ISTYPEP_USED",
                                       "MAX_STACK_SIZE",
                                       "SUQ_USED",
                                       "LD_CACHEMOD_INSTR_OFFSETS",
                                       "LOAD_CACHE_REQUEST",
                                       "ATOM_SYS_INSTR_OFFSETS",
                                       "COOP_GROUP_INSTR_OFFSETS",
                                       "COOP_GROUP_MAX_REGIDS",
                                       "SW1850030_WAR",
                                       "WMMA_USED",
                                       "HAS_PRE_V10_OBJECT",
                                       "ATOMF16_EMUL_INSTR_OFFSETS",
                                       "ATOM16_EMUL_INSTR_REG_MAP",
                                       "REGCOUNT",
                                       "SW2393858_WAR",
                                       "INT_WARP_WIDE_INSTR_OFFSETS",
                                       "SHARED_SCRATCH",
                                       "STATISTICS",
                                       "INDIRECT_BRANCH_TARGETS",
                                       "SW2861232_WAR",
                                       "SW_WAR",
                                       "CUDA_API_VERSION",
                                       "NUM_MBARRIERS",
                                       "MBARRIER_INSTR_OFFSETS"};
  if (a < std::size(kNames)) return std::string("EIATTR_") + kNames[a];
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", a);
  return std::string("EIATTR_") + hex;
}

Result<CubinInfo> read_cubin_info(const ElfImage& image) {
  CubinInfo info;
  info.elf_abi_version = image.abi_version;
  // ELF ABI version 8 and later (CUDA 12.8+) keep the SM in bits 8-15, earlier ones in bits 0-7.
  info.sm = static_cast<int>(image.abi_version >= 8 ? (image.flags >> 8) & 0xff : image.flags & 0xff);

  // sm_80+ kernels reserve 1 KiB of shared memory for the driver; ptxas then
  // emits these symbols and counts the window in .nv.shared.<kernel>.
  bool reserves_shared = false;
  for (const auto& sym : image.symbols)
    reserves_shared = reserves_shared || sym.name.rfind(".nv.reservedSmem", 0) == 0 ||
                      sym.name.rfind("__nv_reservedSMEM", 0) == 0;
  const std::string info_prefix = ".nv.info.";
  std::map<std::string, std::size_t> by_name;
  for (const auto& s : image.sections) {
    if (s.name.rfind(info_prefix, 0) != 0) continue;
    CubinKernel k;
    k.name = s.name.substr(info_prefix.size());
    KF_TRY_ASSIGN(records, read_records(s));
    for (const auto& r : records) apply_kernel_record(k, r);
    std::sort(k.parameters.begin(), k.parameters.end(),
              [](const CubinParameter& a, const CubinParameter& b) { return a.ordinal < b.ordinal; });
    k.records = std::move(records);
    if (const auto* shared = image.section(".nv.shared." + k.name)) {
      k.shared_section_bytes = static_cast<std::int64_t>(shared->size);
      if (reserves_shared)
        k.reserved_shared_bytes = std::min<std::int64_t>(kReservedSharedBytes, k.shared_section_bytes);
      k.shared_bytes = k.shared_section_bytes - k.reserved_shared_bytes;
    }
    if (const auto* c0 = image.section(".nv.constant0." + k.name))
      k.constant0_bytes = static_cast<std::int64_t>(c0->size);
    if (const auto* text = image.section(".text." + k.name))
      k.code_bytes = static_cast<std::int64_t>(text->size);
    by_name[k.name] = info.kernels.size();
    info.kernels.push_back(std::move(k));
  }
  if (const auto* global = image.section(".nv.info")) {
    KF_TRY_ASSIGN(records, read_records(*global));
    for (auto& r : records) {
      if (r.format != kSizedValue || r.payload.size() < 8) continue;
      const std::uint32_t sym = u32_at(r.payload, 0);
      if (sym >= image.symbols.size())
        return Error::bad_input("cubin: .nv.info: " + r.name + " names symbol " + std::to_string(sym) +
                                " of " + std::to_string(image.symbols.size()));
      auto it = by_name.find(image.symbols[sym].name);
      if (it == by_name.end()) continue;  // a device function, not a kernel
      CubinKernel& k = info.kernels[it->second];
      apply_function_record(k, r);
      k.records.push_back(std::move(r));
    }
  }
  return info;
}

}  // namespace kforge
