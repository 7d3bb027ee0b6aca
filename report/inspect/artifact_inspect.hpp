// What `kforge inspect` reports about one compiled artifact: an AMDGPU code
// object (metadata + disassembled instruction mix), a CUDA cubin (EIATTR
// resources, and the SASS instruction mix where nvdisasm is found) or a PTX
// module (instruction mix per entry). The kind comes from
// the content, not the file name. JSON fields: docs/inspect.md.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/binaries/code_object_reader.hpp"
#include "runtime/binaries/cubin_attributes.hpp"
#include "runtime/binaries/instruction_mix.hpp"

namespace kforge::report {

/// Bump when a field of the JSON report changes meaning or goes away.
inline constexpr int kInspectSchemaVersion = 1;

enum class ArtifactKind { kAmdgpuCodeObject, kCubin, kPtx };

/// "amdgpu_code_object", "cubin", "ptx".
const char* artifact_kind_name(ArtifactKind kind);

struct AmdKernelReport {
  AmdKernelMetadata metadata;
  std::uint64_t code_bytes = 0;       ///< size of the kernel's function in .text
  std::uint64_t undecoded_bytes = 0;  ///< bytes LLVM could not decode
  InstructionMix mix;                 ///< no categories when the code object could not be disassembled
};

struct CubinKernelReport {
  CubinKernel attributes;
  InstructionMix mix;  ///< of the SASS; no categories when the cubin could not be disassembled
};

struct PtxEntryReport {
  std::string name;
  std::array<std::int64_t, 3> maxntid = {-1, -1, -1};
  std::array<std::int64_t, 3> reqntid = {-1, -1, -1};
  InstructionMix mix;
};

struct ArtifactReport {
  std::string path;
  ArtifactKind kind = ArtifactKind::kPtx;
  std::string target;          ///< "gfx90a", "sm_90" or the PTX .target
  std::string target_id;       ///< code object: amdhsa.target; cubin/PTX: same as target
  std::string format_version;  ///< code object: amdhsa.version; cubin: ELF ABI version; PTX: .version
  /// Why there is no instruction mix: a code object's processor LLVM 15 does not
  /// know, a cubin without nvdisasm to read it; empty otherwise.
  std::string disassembly_error;
  std::vector<AmdKernelReport> amd_kernels;
  std::vector<CubinKernelReport> cubin_kernels;
  std::vector<PtxEntryReport> ptx_entries;
  std::size_t kernel_count() const { return amd_kernels.size() + cubin_kernels.size() + ptx_entries.size(); }
};

/// The kind of artifact `bytes` hold, from the content: an ELF's e_machine
/// (224 AMDGPU, 190 CUDA) or PTX's .version/.target directives; nullopt for anything else.
std::optional<ArtifactKind> detect_artifact_kind(std::span<const std::uint8_t> bytes);

/// Inspects the file at `path`, keeping the kernels whose name contains
/// `kernel_filter` (all when empty). Errors name the file; kBadInput for a
/// file that is not an artifact or is damaged, kUnsupported for an ELF
/// artifact in a build without LLVM.
Result<ArtifactReport> inspect_artifact(const std::string& path, const std::string& kernel_filter);

/// The artifacts directly in `dir` (what `kforge compile --out` writes), by
/// content, sorted by name; sources and logs are left out.
Result<std::vector<std::string>> find_artifacts(const std::string& dir);

nlohmann::json to_json(const ArtifactReport& report);
nlohmann::json to_json(const InstructionMix& mix);

}  // namespace kforge::report
