// Reads one artifact by kind and assembles the report `kforge inspect` prints.
#include "report/inspect/artifact_inspect.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/binaries/amd_target_id.hpp"
#include "runtime/binaries/amdgpu_disassembler.hpp"
#include "runtime/binaries/amdgpu_objdump.hpp"
#include "runtime/binaries/elf_image.hpp"
#include "runtime/binaries/ptx_module.hpp"
#include "runtime/binaries/sass_disassembler.hpp"

namespace kforge::report {

namespace {

constexpr std::uint16_t kEmAmdgpu = 224, kEmCuda = 190;

Result<std::vector<std::uint8_t>> read_bytes(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error::bad_input(path + ": is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error::bad_input(path + ": cannot open");
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

Error in_file(const std::string& path, Error e) {
  e.message = path + ": " + e.message;
  return e;
}

bool keep(const std::string& name, const std::string& filter) {
  return filter.empty() || name.find(filter) != std::string::npos;
}

std::uint16_t elf_machine(std::span<const std::uint8_t> b) {
  return static_cast<std::uint16_t>(b[18] | b[19] << 8);
}

bool is_elf(std::span<const std::uint8_t> b) {
  return b.size() >= 20 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

Status inspect_amd(std::span<const std::uint8_t> bytes, const std::string& filter, ArtifactReport& out) {
  KF_TRY_ASSIGN(co, read_amd_code_object(bytes));
  KF_TRY_ASSIGN(image, read_elf_image(bytes));
  // A processor newer than LLVM 15 goes to llvm-objdump-22, and without it
  // still gets its metadata, without a mix.
  auto disassembled = disassemble_amdgpu_functions(image, co.target);
  if (!disassembled.ok() && disassembled.error().code == ErrorCode::kUnsupported) {
    auto objdump = objdump_amdgpu_functions(bytes);
    if (objdump.ok())
      disassembled = std::move(objdump);
    else
      disassembled =
          Error{ErrorCode::kUnsupported, disassembled.error().message + "; " + objdump.error().message, {}};
  }
  if (!disassembled.ok() && disassembled.error().code != ErrorCode::kUnsupported) return disassembled.error();
  if (!disassembled.ok()) out.disassembly_error = disassembled.error().message;
  const std::vector<AmdFunctionCode> functions =
      disassembled.ok() ? std::move(disassembled).value() : std::vector<AmdFunctionCode>{};
  out.target_id = co.target;
  out.target = parse_amd_target_id(co.target).processor;
  out.format_version = co.version;
  for (const auto& k : co.kernels) {
    if (!keep(k.name, filter)) continue;
    AmdKernelReport r;
    r.metadata = k;
    std::vector<std::string> mnemonics;
    for (const auto& fn : functions) {
      if (fn.symbol != k.name) continue;
      r.code_bytes = fn.size;
      r.undecoded_bytes = fn.undecoded_bytes;
      for (const auto& inst : fn.instructions) mnemonics.push_back(inst.mnemonic);
    }
    if (out.disassembly_error.empty()) r.mix = tally_mix(Isa::kAmdgcn, mnemonics);
    out.amd_kernels.push_back(std::move(r));
  }
  return ok_status();
}

std::vector<std::string> sass_mnemonics(const std::vector<SassFunction>& functions,
                                        const std::string& kernel) {
  std::vector<std::string> mnemonics;
  for (const auto& fn : functions)
    if (fn.name == kernel)
      for (const auto& inst : fn.instructions) mnemonics.push_back(inst.mnemonic);
  return mnemonics;
}

Status inspect_cubin(std::span<const std::uint8_t> bytes, const std::string& filter, ArtifactReport& out) {
  KF_TRY_ASSIGN(image, read_elf_image(bytes));
  KF_TRY_ASSIGN(info, read_cubin_info(image));
  out.target = "sm_" + std::to_string(info.sm);
  out.target_id = out.target;
  out.format_version = std::to_string(info.elf_abi_version);
  // Without nvdisasm a cubin still gets its attributes, without a mix.
  auto disassembled = disassemble_sass(bytes);
  if (!disassembled.ok() && disassembled.error().code != ErrorCode::kNotFound) return disassembled.error();
  if (!disassembled.ok()) out.disassembly_error = disassembled.error().message;
  for (auto& k : info.kernels) {
    if (!keep(k.name, filter)) continue;
    CubinKernelReport r{std::move(k), {}};
    if (disassembled.ok()) r.mix = tally_mix(Isa::kSass, sass_mnemonics(*disassembled, r.attributes.name));
    out.cubin_kernels.push_back(std::move(r));
  }
  return ok_status();
}

Status inspect_ptx(std::span<const std::uint8_t> bytes, const std::string& filter, ArtifactReport& out) {
  KF_TRY_ASSIGN(module,
                parse_ptx(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  out.target = module.target;
  out.target_id = module.target;
  out.format_version = module.version;
  for (const auto& e : module.entries) {
    if (!keep(e.name, filter)) continue;
    out.ptx_entries.push_back({e.name, e.maxntid, e.reqntid, tally_mix(Isa::kPtx, e.opcodes)});
  }
  return ok_status();
}

nlohmann::json num(std::int64_t v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json dims(const std::array<std::int64_t, 3>& d) {
  return d[0] < 0 ? nlohmann::json(nullptr) : nlohmann::json::array({d[0], d[1], d[2]});
}

nlohmann::json mix_or_null(const InstructionMix& mix) {
  return mix.categories.empty() ? nlohmann::json(nullptr) : to_json(mix);
}

nlohmann::json amd_json(const AmdKernelReport& r) {
  const auto& m = r.metadata;
  return {{"name", m.name},
          {"symbol", m.symbol},
          {"vgprs", num(m.vgpr_count)},
          {"agprs", num(m.agpr_count)},
          {"sgprs", num(m.sgpr_count)},
          {"vgpr_spills", num(m.vgpr_spill_count)},
          {"sgpr_spills", num(m.sgpr_spill_count)},
          {"lds_bytes", num(m.lds_bytes)},
          {"scratch_bytes", num(m.scratch_bytes)},
          {"wavefront_size", num(m.wavefront_size)},
          {"max_flat_workgroup_size", num(m.max_flat_workgroup_size)},
          {"kernarg_bytes", num(m.kernarg_bytes)},
          {"uses_dynamic_stack", m.uses_dynamic_stack},
          {"code_bytes", r.code_bytes},
          {"undecoded_bytes", r.undecoded_bytes},
          {"instruction_mix", mix_or_null(r.mix)}};
}

nlohmann::json cubin_json(const CubinKernelReport& report) {
  const CubinKernel& k = report.attributes;
  nlohmann::json attrs = nlohmann::json::array();
  for (const auto& r : k.records) {
    nlohmann::json a = {{"name", r.name}, {"format", r.format}};
    if (r.format == 4) {
      a["payload_bytes"] = r.payload.size();
    } else if (r.format != 1) {
      a["value"] = r.value;
    }
    attrs.push_back(std::move(a));
  }
  return {{"name", k.name},
          {"registers", num(k.registers)},
          {"max_stack_bytes", num(k.max_stack_bytes)},
          {"frame_bytes", num(k.frame_bytes)},
          {"min_stack_bytes", num(k.min_stack_bytes)},
          {"crs_stack_bytes", num(k.crs_stack_bytes)},
          {"shared_bytes", k.shared_bytes},
          {"shared_section_bytes", k.shared_section_bytes},
          {"reserved_shared_bytes", k.reserved_shared_bytes},
          {"constant0_bytes", num(k.constant0_bytes)},
          {"param_cbank_offset", num(k.param_cbank_offset)},
          {"param_cbank_bytes", num(k.param_cbank_bytes)},
          {"cbank_param_bytes", num(k.cbank_param_bytes)},
          {"max_registers", num(k.max_registers)},
          {"cuda_api_version", num(k.cuda_api_version)},
          {"max_threads", dims(k.max_threads)},
          {"req_threads", dims(k.req_threads)},
          {"code_bytes", num(k.code_bytes)},
          {"attributes", attrs},
          {"instruction_mix", mix_or_null(report.mix)}};
}

}  // namespace

const char* artifact_kind_name(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::kAmdgpuCodeObject:
      return "amdgpu_code_object";
    case ArtifactKind::kCubin:
      return "cubin";
    case ArtifactKind::kPtx:
      return "ptx";
  }
  return "?";
}

std::optional<ArtifactKind> detect_artifact_kind(std::span<const std::uint8_t> bytes) {
  if (is_elf(bytes)) {
    if (elf_machine(bytes) == kEmAmdgpu) return ArtifactKind::kAmdgpuCodeObject;
    if (elf_machine(bytes) == kEmCuda) return ArtifactKind::kCubin;
    return std::nullopt;
  }
  if (looks_like_ptx(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
    return ArtifactKind::kPtx;
  return std::nullopt;
}

Result<ArtifactReport> inspect_artifact(const std::string& path, const std::string& kernel_filter) {
  KF_TRY_ASSIGN(bytes, read_bytes(path));
  const auto kind = detect_artifact_kind(bytes);
  if (!kind) {
    if (is_elf(bytes))
      return Error::bad_input(path + ": an ELF file for machine " + std::to_string(elf_machine(bytes)) +
                              ", not an AMDGPU code object (224) or a CUDA cubin (190)");
    return Error::bad_input(path + ": not a compiled artifact (an AMDGPU code object, a CUDA cubin or PTX)");
  }
  ArtifactReport report;
  report.path = path;
  report.kind = *kind;
  Status s = *kind == ArtifactKind::kAmdgpuCodeObject ? inspect_amd(bytes, kernel_filter, report)
             : *kind == ArtifactKind::kCubin          ? inspect_cubin(bytes, kernel_filter, report)
                                                      : inspect_ptx(bytes, kernel_filter, report);
  if (!s.ok()) return in_file(path, s.error());
  return report;
}

Result<std::vector<std::string>> find_artifacts(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    std::vector<std::uint8_t> head(4096);
    f.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(f.gcount()));
    if (detect_artifact_kind(head)) out.push_back(entry.path().string());
  }
  if (ec) return Error::bad_input(dir + ": cannot list the directory: " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

nlohmann::json to_json(const InstructionMix& mix) {
  nlohmann::json cats = nlohmann::json::object();
  for (const auto& [name, n] : mix.categories) cats[name] = n;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [m, n] : mix.top_mnemonics) top.push_back({{"mnemonic", m}, {"count", n}});
  return {{"total", mix.total}, {"categories", cats}, {"top_mnemonics", top}};
}

nlohmann::json to_json(const ArtifactReport& r) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : r.amd_kernels) kernels.push_back(amd_json(k));
  for (const auto& k : r.cubin_kernels) kernels.push_back(cubin_json(k));
  for (const auto& e : r.ptx_entries) {
    kernels.push_back({{"name", e.name},
                       {"maxntid", dims(e.maxntid)},
                       {"reqntid", dims(e.reqntid)},
                       {"instruction_mix", to_json(e.mix)}});
  }
  return {{"path", r.path},
          {"kind", artifact_kind_name(r.kind)},
          {"target", r.target},
          {"target_id", r.target_id},
          {"format_version", r.format_version},
          {"disassembly_error",
           r.disassembly_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.disassembly_error)},
          {"kernels", kernels}};
}

}  // namespace kforge::report
