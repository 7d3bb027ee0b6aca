// How a kernel compiled outside kforge's prelude is launched. A Triton
// kernel fixes its own block size, dynamic shared memory, scratch buffers
// passed after its arguments and cluster size in its compiler's metadata;
// kforge's templates take all of that from the launch geometry and the
// prelude. The parameter list a LaunchAbi promises is checked against the
// table the binary itself carries (cubin: EIATTR_KPARAM_INFO; AMDGPU code
// object: the kernarg metadata) before the kernel is ever launched.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

/// What a compiled kernel's bytes are.
enum class BinaryFormat {
  kUnknown,
  kOpenClBinary,
  kPtx,
  kCubin,
  kHsaco,
  kTritonSource,  ///< a Triton kernel's source and request, run by the interpreter (triton_interpreter.hpp)
};
std::string_view name(BinaryFormat format);
/// The format named `text` ("cubin", "hsaco", ...), nullopt for others.
std::optional<BinaryFormat> parse_binary_format(std::string_view text);

/// One parameter the caller passes, as the compiler typed it.
struct AbiParameter {
  std::string name;
  std::string type;  ///< Triton's: "*bf16", "i32", "fp32", ...
  int bytes = 0;     ///< in the parameter buffer
  bool pointer = false;
};

/// Where one kernel argument comes from: the caller's argument at `from`,
/// the ABI's workspace at `workspace`, or (both < 0) the int32 `value`
/// fixed when the kernel was built (a stride computed from the problem).
struct AbiArgument {
  int from = -1;
  std::int32_t value = 0;
  int workspace = -1;
};

/// Memory a kernel needs beyond what its caller passes (a Triton manifest's
/// workspace), made by the device (kernel_workspaces.hpp): `elements` of
/// `element_bytes`; a zeroed one starts all zero and the kernel must leave
/// it so.
struct AbiWorkspace {
  std::string name;
  std::int64_t elements = 0;
  int element_bytes = 1;
  bool zeroed = false;
  std::int64_t bytes() const { return elements * element_bytes; }
};

struct LaunchAbi {
  /// Who fixed this ABI ("Triton 3.9.0"), for messages.
  std::string compiler;
  /// The caller's arguments, in order.
  std::vector<AbiParameter> parameters;
  /// Pointers the launcher appends after the arguments: Triton passes its
  /// global scratch, then its profile scratch (null where the size is 0).
  bool scratch_pointers = false;
  int block_threads = 0;  ///< every launch's threads per block (num_warps x warp size)
  int dynamic_shared_bytes = 0;
  std::int64_t global_scratch_bytes = 0;  ///< per program (per CTA)
  std::int64_t global_scratch_align = 1;
  std::int64_t profile_scratch_bytes = 0;  ///< per program
  std::int64_t profile_scratch_align = 1;
  int cluster_ctas = 1;  ///< CTAs per cluster along x (Triton's num_ctas); gridX is multiplied by it
  /// The kernel's arguments from the caller's (the operator's, in its
  /// contract's order); empty: the caller's arguments are the kernel's.
  std::vector<AbiArgument> argument_map;
  /// What the argument map's workspace entries name.
  std::vector<AbiWorkspace> workspaces;

  /// Every parameter the binary takes: the arguments, then the scratch pointers.
  std::vector<int> binary_parameter_bytes() const;
};

/// Each parameter's size as `binary` records it for `kernel_name`; kBadInput
/// naming the kernel where the binary has no table for it.
Result<std::vector<int>> recorded_parameter_bytes(BinaryFormat format, std::span<const std::uint8_t> binary,
                                                  const std::string& kernel_name);

/// kBadInput when the binary's own parameter table disagrees with `abi`:
/// "gemm_dot: the binary takes 18 parameters, Triton 3.9.0's signature 19 (...)".
Status check_recorded_parameters(const LaunchAbi& abi, BinaryFormat format, std::span<const std::uint8_t> binary,
                                 const std::string& kernel_name);

/// Bytes of one scratch buffer for `programs` programs, or 0 where the ABI asks none.
std::int64_t scratch_bytes(std::int64_t per_program, std::int64_t programs, int cluster_ctas);

}  // namespace kforge
