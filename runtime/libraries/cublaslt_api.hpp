// cuBLASLt (NVIDIA's GEMM library) loaded with dlopen: the types, values and
// entry points kforge's library candidates call, declared here as cublasLt.h
// of CUDA 12 and 13 defines them (so kforge builds without the toolkit), and
// the library's identity (version and file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace kforge::cublaslt {

using StatusCode = int;  ///< cublasStatus_t
using Handle = struct cublasLtContext*;
using MatmulDesc = struct MatmulDescOpaque*;
using MatrixLayout = struct MatrixLayoutOpaque*;
using Preference = struct PreferenceOpaque*;
using Stream = void*;  ///< cudaStream_t, the driver's CUstream

/// cublasLtMatmulAlgo_t: opaque, 64 bytes.
struct Algo {
  std::uint64_t data[8];
};

/// cublasLtMatmulHeuristicResult_t.
struct HeuristicResult {
  Algo algo;
  std::size_t workspace_size;
  StatusCode state;
  float waves_count;
  int reserved[4];
};

inline constexpr StatusCode kSuccess = 0;

// cudaDataType_t (library_types.h) and cublasComputeType_t.
enum DataType : int { kR32F = 0, kR16F = 2, kR16BF = 14 };
inline constexpr int kCompute32F = 68;
// cublasOperation_t.
enum Operation : int { kOpN = 0, kOpT = 1 };

// cublasLtMatmulDescAttributes_t.
enum DescAttribute : int { kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7, kDescBiasPointer = 8 };
// cublasLtMatrixLayoutAttribute_t.
enum LayoutAttribute : int { kLayoutBatchCount = 5, kLayoutStridedBatchOffset = 6 };
// cublasLtMatmulPreferenceAttributes_t.
enum PreferenceAttribute : int { kPrefMaxWorkspaceBytes = 1 };
// cublasLtEpilogue_t (uint32_t).
enum Epilogue : std::uint32_t {
  kEpilogueDefault = 1,
  kEpilogueRelu = 2,
  kEpilogueBias = 4,
  kEpilogueReluBias = 6
};

/// cublasLtMatmulAlgoConfigAttributes_t: the fields that name one algorithm
/// configuration, each with the size cublasLt.h gives it.
enum AlgoConfig : int {
  kConfigId = 0,               ///< int32
  kConfigTileId = 1,           ///< uint32
  kConfigSplitkNum = 2,        ///< int32
  kConfigReductionScheme = 3,  ///< uint32
  kConfigCtaSwizzling = 4,     ///< uint32
  kConfigCustomOption = 5,     ///< uint32
  kConfigStagesId = 6,         ///< uint32
  kConfigInnerShapeId = 7,     ///< uint16
  kConfigClusterShapeId = 8,   ///< uint16
};

/// One stored field of an algorithm: its JSON name, attribute and size.
struct AlgoField {
  const char* name;
  AlgoConfig attribute;
  std::size_t bytes;
};

/// Every field an algorithm's identity stores, ID first (set by
/// cublasLtMatmulAlgoInit, never by ConfigSetAttribute).
std::span<const AlgoField> algo_fields();

struct Api {
  StatusCode (*create)(Handle*) = nullptr;
  StatusCode (*destroy)(Handle) = nullptr;
  std::size_t (*get_version)() = nullptr;
  const char* (*get_status_string)(StatusCode) = nullptr;
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
  StatusCode (*algo_init)(Handle, int compute, int scale, int a, int b, int c, int d, int algo_id,
                          Algo* algo) = nullptr;
  StatusCode (*algo_check)(Handle, MatmulDesc, MatrixLayout a, MatrixLayout b, MatrixLayout c, MatrixLayout d,
                           const Algo* algo, HeuristicResult* result) = nullptr;
  StatusCode (*algo_config_set_attribute)(Algo*, int, const void*, std::size_t) = nullptr;
  StatusCode (*algo_config_get_attribute)(const Algo*, int, void*, std::size_t, std::size_t*) = nullptr;
  StatusCode (*matmul)(Handle, MatmulDesc, const void* alpha, const void* a, MatrixLayout, const void* b,
                       MatrixLayout, const void* beta, const void* c, MatrixLayout, void* d, MatrixLayout,
                       const Algo* algo, void* workspace, std::size_t workspace_bytes,
                       Stream stream) = nullptr;
  /// "cublaslt 13.1.0 (/usr/local/cuda/lib64/libcublasLt.so.13.1.0.3, 540123456 bytes)".
  std::string identity;
};

/// The symbols load() binds, in the order of Api's fields.
std::span<const char* const> symbol_names();

/// "13.1.0" from cublasLtGetVersion()'s 130100.
std::string version_text(std::size_t version);

/// The library files tried: $KFORGE_CUBLASLT_LIBRARY when set, else
/// libcublasLt.so.13, .so.12 and .so under $KFORGE_CUDA_PATH, $CUDA_PATH and
/// /usr/local/cuda, then on the loader's path.
std::vector<std::string> library_files();

/// Loads cuBLASLt once per list of files; the error names the library or
/// symbol missing. Needs no GPU: only the calls that run do.
const Result<const Api*>& load();

/// Loads from `files` (tests point it at a library without cuBLASLt's symbols).
Result<const Api*> load_from(const std::vector<std::string>& files);

/// "CUBLAS_STATUS_NOT_SUPPORTED (13)".
std::string status_text(const Api& api, StatusCode status);

}  // namespace kforge::cublaslt
