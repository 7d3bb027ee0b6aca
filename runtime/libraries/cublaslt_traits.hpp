// cuBLASLt as the shared BLASLt gemm (blaslt_gemm.cpp) calls it: its API's
// types and values, the CUDA device's stream and buffers, bias and relu as
// its epilogues, and an algorithm stored as its configuration fields, which
// are rebuilt and checked for the bound problem.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "generator/backend_traits.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/libraries/blaslt_objects.hpp"
#include "runtime/libraries/cublaslt_api.hpp"

namespace kforge {

struct CublasLt {
  using Api = cublaslt::Api;
  using StatusCode = cublaslt::StatusCode;
  using Handle = cublaslt::Handle;
  using MatmulDesc = cublaslt::MatmulDesc;
  using MatrixLayout = cublaslt::MatrixLayout;
  using Preference = cublaslt::Preference;
  using Algo = cublaslt::Algo;
  using HeuristicResult = cublaslt::HeuristicResult;

  static constexpr const char* kName = "cublaslt";    ///< in identities and messages
  static constexpr const char* kPrefix = "cublasLt";  ///< of its entry points' names
  static constexpr BackendId kBackend = BackendId::kCuda;
  static constexpr const char* kDevice = "CUDA";
  static constexpr bool kEpilogue = true;  ///< binds bias and relu (EPILOGUE, BIAS_POINTER)
  static constexpr StatusCode kSuccess = cublaslt::kSuccess;
  static constexpr int kR32F = cublaslt::kR32F, kR16F = cublaslt::kR16F, kR16BF = cublaslt::kR16BF;
  static constexpr int kCompute32F = cublaslt::kCompute32F;
  static constexpr std::int32_t kOpN = cublaslt::kOpN, kOpT = cublaslt::kOpT;
  static constexpr int kDescTransA = cublaslt::kDescTransA, kDescTransB = cublaslt::kDescTransB;
  static constexpr int kDescEpilogue = cublaslt::kDescEpilogue, kDescBiasPointer = cublaslt::kDescBiasPointer;
  static constexpr int kLayoutBatchCount = cublaslt::kLayoutBatchCount;
  static constexpr int kLayoutStridedBatchOffset = cublaslt::kLayoutStridedBatchOffset;
  static constexpr int kPrefMaxWorkspaceBytes = cublaslt::kPrefMaxWorkspaceBytes;

  static const Result<const Api*>& load() { return cublaslt::load(); }
  static std::string status_text(const Api& api, StatusCode st) { return cublaslt::status_text(api, st); }
  static Status make_current(Device& device);
  static Result<void*> address(const Buffer& buffer);
  static Result<double> timed_call(Device& device, const std::function<Status(void*)>& call);
  static Status enqueued_call(Device& device, const std::function<Status(void*)>& call);

  /// The epilogue of the problem's bias and activation, into `s`; kUnsupported
  /// where cuBLASLt has none that computes it as kforge defines it.
  static Status set_epilogue(const Problem& p, BlasLtShape& s);
  /// An algorithm's configuration fields as stored (cublaslt::algo_fields()).
  static nlohmann::json algo_json(const Api& api, const Algo& algo);
  /// The algorithm of a stored call ("algo": its fields) rebuilt
  /// (cublasLtMatmulAlgoInit, ConfigSetAttribute) and checked for the bound
  /// problem (cublasLtMatmulAlgoCheck); nullopt where none is stored, an
  /// error where the check refuses it.
  static Result<std::optional<BlasLtChoice<CublasLt>>> replay(const BlasLtObjects<CublasLt>& o,
                                                              const BlasLtShape& s,
                                                              const nlohmann::json& stored);
};

}  // namespace kforge
