// Resource attributes of the kernels in a CUDA cubin, read from its ELF
// image: the EIATTR records of .nv.info (per symbol) and .nv.info.<kernel>,
// the sizes of .nv.shared.<kernel> and .nv.constant0.<kernel>, and the SM
// version from e_flags. The EIATTR format is NVIDIA's, undocumented; what is
// decoded and how is written down in docs/inspect.md.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runtime/binaries/elf_image.hpp"

namespace kforge {

/// One EIATTR record as stored: format (1 none, 2 byte, 3 half, 4 sized), attribute id and payload.
struct EiattrRecord {
  std::uint8_t format = 0;
  std::uint8_t attribute = 0;
  std::string name;                   ///< "EIATTR_REGCOUNT", or "EIATTR_0x50" for an id kforge does not name
  std::uint32_t value = 0;            ///< formats 2 and 3: the inline value; format 4: the payload size
  std::vector<std::uint8_t> payload;  ///< format 4 only
};

/// One kernel parameter as EIATTR_KPARAM_INFO records it: its position,
/// its offset in the parameter bank and its size in bytes.
struct CubinParameter {
  int ordinal = 0;
  int offset = 0;
  int bytes = 0;
  bool operator==(const CubinParameter&) const = default;
};

/// A kernel's attributes; -1 where the cubin has no such record.
struct CubinKernel {
  std::string name;
  std::int64_t registers = -1;           ///< EIATTR_REGCOUNT
  std::int64_t max_stack_bytes = -1;     ///< EIATTR_MAX_STACK_SIZE
  std::int64_t frame_bytes = -1;         ///< EIATTR_FRAME_SIZE
  std::int64_t min_stack_bytes = -1;     ///< EIATTR_MIN_STACK_SIZE
  std::int64_t crs_stack_bytes = -1;     ///< EIATTR_CRS_STACK_SIZE
  std::int64_t param_cbank_bytes = -1;   ///< EIATTR_PARAM_CBANK size (kernel parameters in bank 0)
  std::int64_t param_cbank_offset = -1;  ///< EIATTR_PARAM_CBANK offset
  std::int64_t cbank_param_bytes = -1;   ///< EIATTR_CBANK_PARAM_SIZE
  std::int64_t max_registers = -1;       ///< EIATTR_MAXREG_COUNT (the register cap ptxas worked under)
  std::int64_t cuda_api_version = -1;    ///< EIATTR_CUDA_API_VERSION, e.g. 130 for CUDA 13.0
  std::array<std::int64_t, 3> max_threads = {-1, -1,
                                             -1};  ///< EIATTR_MAX_THREADS (__launch_bounds__ / .maxntid)
  std::array<std::int64_t, 3> req_threads = {-1, -1, -1};  ///< EIATTR_REQNTID (.reqntid)
  /// Static shared memory as ptxas reports it: shared_section_bytes less reserved_shared_bytes.
  std::int64_t shared_bytes = 0;
  std::int64_t shared_section_bytes = 0;  ///< size of .nv.shared.<kernel> (0 when absent)
  /// The driver-reserved window (1 KiB) at the start of that section, when the
  /// cubin carries a reserved-shared-memory symbol (sm_80+); else 0.
  std::int64_t reserved_shared_bytes = 0;
  std::int64_t constant0_bytes = -1;  ///< size of .nv.constant0.<kernel>
  std::int64_t code_bytes = -1;       ///< size of .text.<kernel>
  /// The parameters (EIATTR_KPARAM_INFO), by ordinal; empty when the cubin lists none.
  std::vector<CubinParameter> parameters;
  std::vector<EiattrRecord> records;  ///< every record naming this kernel, in file order
};

struct CubinInfo {
  int sm = 0;                        ///< from e_flags: 90 for sm_90
  int elf_abi_version = 0;           ///< e_ident[EI_ABIVERSION]; decides where e_flags keep the SM
  std::vector<CubinKernel> kernels;  ///< in section order
};

/// Reads every kernel (a .text.<name> section with a .nv.info.<name>) of a
/// cubin. kBadInput, naming the section and offset, for a record that runs
/// past the end of its section.
Result<CubinInfo> read_cubin_info(const ElfImage& image);

/// The name kforge gives an EIATTR id ("EIATTR_REGCOUNT"; "EIATTR_0x50" for others).
std::string eiattr_name(std::uint8_t attribute);

}  // namespace kforge
