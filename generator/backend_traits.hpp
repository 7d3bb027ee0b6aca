// The backends kforge compiles for, as one table: what the rest of the code
// asks of a backend (its name, its prelude, how its architectures are
// spelled, what a compute unit is called, which profiler reads its counters)
// comes from here rather than from comparing backend names.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace kforge {

enum class BackendId { kOpenCL, kCuda, kHip };

struct BackendTraits {
  BackendId id;
  std::string_view name;          ///< "opencl", "cuda", "hip": DeviceInfo::backend, manifest targets, selectors
  std::string_view display_name;  ///< "OpenCL", "CUDA", "HIP"
  /// The prelude files (templates/prelude/) composed before a template's
  /// source, in order: the backend's own, then what it shares.
  std::span<const std::string_view> prelude_files;
  std::string_view arch_prefix;        ///< "sm_", "gfx"; empty where architectures are CPU or vendor names
  std::string_view compute_unit_word;  ///< "SM", "CU", "compute unit"
  std::string_view gpu_vendor;         ///< "NVIDIA", "AMD"; empty for a backend of many vendors
  /// The counter collector of its GPUs: "ncu", "rocprofiler"; empty for a
  /// backend of many vendors (a CPU is read with perf whatever its backend).
  std::string_view profiler;
};

/// Every backend, in the order kforge lists them.
std::span<const BackendTraits> all_backends();
const BackendTraits& backend_traits(BackendId id);
/// The backend named `name`; nullopt for a name that is none.
const BackendTraits* find_backend(std::string_view name);
/// "opencl", "cuda", "hip".
std::string_view name(BackendId id);
/// Whether `backend` (a DeviceInfo::backend or a target's) names `id`.
bool is_backend(std::string_view backend, BackendId id);

}  // namespace kforge
