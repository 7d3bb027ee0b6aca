// A kernel Triton compiled, loaded and launched from C++ without Python.
// kforge's Triton compile helper (triton/kforge_triton/compile.py) writes,
// beside each cubin or HSACO, a launch record `<kernel>.json`:
//   {"kernel": "gemm_dot", "format": "cubin", "binary": "gemm_dot.cubin",
//    "parameters": [{"name": "M", "type": "i32"}, {"name": "A", "type": "*bf16"}, ...],
//    "metadata": {Triton's: "shared", "num_warps", "num_ctas", "global_scratch_size", ...},
//    "target": "cuda:sm_90a", "triton_version": "3.9.0"}
// From it kforge builds a CompiledKernel whose LaunchAbi a CUDA or HIP
// device follows: block = num_warps x warp size, dynamic shared memory from
// `shared` (with the opt-in above 48 KiB), the global and profile scratch
// pointers after the arguments, clusters of num_ctas. Refused with the
// reason: cooperative launches, programmatic dependent launch (PDL) and
// kernels that take host-built tensor descriptors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/device/launch_abi.hpp"

namespace kforge {

/// The launch ABI of a Triton kernel from its metadata and its
/// non-constexpr parameters (`[{"name", "type"}]`, in the kernel's order).
/// kBadInput naming the field for anything missing, mistyped or refused.
Result<LaunchAbi> triton_launch_abi(const nlohmann::json& metadata, const nlohmann::json& parameters);

/// The bytes of one parameter of Triton type `type` ("*fp16" 8, "i32" 4,
/// "bf16" 2, ...); nullopt for a type kforge does not know.
std::optional<int> triton_parameter_bytes(const std::string& type);

/// A launch record (the JSON above) and its binary as a CompiledKernel a
/// device loads: the binary's parameter table is checked against the
/// record's parameters here, and again by the device at load.
Result<CompiledKernel> triton_compiled_kernel(const nlohmann::json& record, std::vector<std::uint8_t> binary);

/// How a Triton instance's kernel arguments come from the operator's: its
/// request's (generator/instance.cpp) "arguments", each "from" an operator
/// argument's position, a fixed int32 "value", or a "workspace" of that
/// many elements of the signature's type ("zeroed" or not), which the
/// device makes. Sets `abi`'s argument_map and workspaces.
void apply_triton_arguments(LaunchAbi& abi, const nlohmann::json& request);

/// Reads the launch record at `path` and the binary it names (relative to
/// the record's folder). kBadInput naming the file and field.
Result<CompiledKernel> read_triton_kernel(const std::filesystem::path& path);

}  // namespace kforge
