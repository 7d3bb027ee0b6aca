// hipBLASLt (AMD's GEMM library) loaded with dlopen: the types, values and
// entry points kforge's library candidates call, declared here as
// hipblaslt.h of ROCm 6 defines them (so kforge builds without ROCm), and
// the library's identity (version and file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge::hipblaslt {

using StatusCode = int;  ///< hipblasStatus_t
using Handle = struct HipblasLtHandle*;
using MatmulDesc = struct HipblasLtMatmulDesc*;
using MatrixLayout = struct HipblasLtMatrixLayout*;
using Preference = struct HipblasLtPreference*;
using Stream = void*;  ///< hipStream_t

/// hipblasLtMatmulAlgo_t.
struct Algo {
  std::uint8_t data[16];
  std::size_t max_workspace_bytes;
};

/// hipblasLtMatmulHeuristicResult_t.
struct HeuristicResult {
  Algo algo;
  std::size_t workspace_size;
  StatusCode state;
  float waves_count;
  int reserved[4];
};

inline constexpr StatusCode kSuccess = 0;
// hipDataType and hipblasComputeType_t.
enum DataType : int { kR32F = 0, kR16F = 2, kR16BF = 14 };
inline constexpr int kCompute32F = 2;
// hipblasOperation_t.
enum Operation : int { kOpN = 111, kOpT = 112 };
// hipblasLtMatmulDescAttributes_t, hipblasLtMatrixLayoutAttribute_t,
// hipblasLtMatmulPreferenceAttributes_t.
enum DescAttribute : int { kDescTransA = 0, kDescTransB = 1 };
enum LayoutAttribute : int { kLayoutBatchCount = 0, kLayoutStridedBatchOffset = 1 };
enum PreferenceAttribute : int { kPrefMaxWorkspaceBytes = 1 };

struct Api {
  StatusCode (*create)(Handle*) = nullptr;
  StatusCode (*destroy)(Handle) = nullptr;
  StatusCode (*matmul_desc_create)(MatmulDesc*, int compute, int scale) = nullptr;
  StatusCode (*matmul_desc_destroy)(MatmulDesc) = nullptr;
  StatusCode (*matmul_desc_set_attribute)(MatmulDesc, int, const void*, std::size_t) = nullptr;
  StatusCode (*matrix_layout_create)(MatrixLayout*, int type, std::uint64_t rows, std::uint64_t cols,
                                     std::int64_t ld) = nullptr;
  StatusCode (*matrix_layout_destroy)(MatrixLayout) = nullptr;
  StatusCode (*matrix_layout_set_attribute)(MatrixLayout, int, const void*, std::size_t) = nullptr;
  StatusCode (*preference_create)(Preference*) = nullptr;
  StatusCode (*preference_destroy)(Preference) = nullptr;
  StatusCode (*preference_set_attribute)(Preference, int, const void*, std::size_t) = nullptr;
  StatusCode (*algo_get_heuristic)(Handle, MatmulDesc, MatrixLayout a, MatrixLayout b, MatrixLayout c,
                                   MatrixLayout d, Preference, int requested, HeuristicResult* results,
                                   int* returned) = nullptr;
  StatusCode (*matmul)(Handle, MatmulDesc, const void* alpha, const void* a, MatrixLayout, const void* b,
                       MatrixLayout, const void* beta, const void* c, MatrixLayout, void* d, MatrixLayout,
                       const Algo* algo, void* workspace, std::size_t workspace_bytes,
                       Stream stream) = nullptr;
  /// "hipblaslt 0.12.1 (/opt/rocm/lib/libhipblaslt.so.0.12.1, 123456 bytes)": the version the
  /// loaded file's real name carries (hipBLASLt reports its own only through a handle, on a GPU).
  std::string identity;
};

/// The symbols load() binds, in the order of Api's fields.
std::span<const char* const> symbol_names();

/// The library files tried: $KFORGE_HIPBLASLT_LIBRARY when set, else
/// libhipblaslt.so.1, .so.0 and .so under $KFORGE_ROCM_PATH, $ROCM_PATH and
/// /opt/rocm, then on the loader's path.
std::vector<std::string> library_files();

/// Loads hipBLASLt once per list of files; the error names the library or
/// symbol missing.
const Result<const Api*>& load();
Result<const Api*> load_from(const std::vector<std::string>& files);

}  // namespace kforge::hipblaslt
