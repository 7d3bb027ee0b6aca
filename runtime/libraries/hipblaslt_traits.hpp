// hipBLASLt as the shared BLASLt gemm (blaslt_gemm.cpp) calls it: its API's
// types and values, the HIP device's stream and buffers, no epilogue, and an
// algorithm stored as its opaque bytes, which hipBLASLt lets a program keep
// for the same library version (the template hash covers it).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "generator/backend_traits.hpp"
#include "generator/problem.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/libraries/blaslt_objects.hpp"
#include "runtime/libraries/hipblaslt_api.hpp"

namespace kforge {

struct HipblasLt {
  using Api = hipblaslt::Api;
  using StatusCode = hipblaslt::StatusCode;
  using Handle = hipblaslt::Handle;
  using MatmulDesc = hipblaslt::MatmulDesc;
  using MatrixLayout = hipblaslt::MatrixLayout;
  using Preference = hipblaslt::Preference;
  using Algo = hipblaslt::Algo;
  using HeuristicResult = hipblaslt::HeuristicResult;

  static constexpr const char* kName = "hipblaslt";    ///< in identities and messages
  static constexpr const char* kPrefix = "hipblasLt";  ///< of its entry points' names
  static constexpr BackendId kBackend = BackendId::kHip;
  static constexpr const char* kDevice = "HIP";
  static constexpr bool kEpilogue = false;  ///< kforge binds none of hipBLASLt's
  static constexpr StatusCode kSuccess = hipblaslt::kSuccess;
  static constexpr int kR32F = hipblaslt::kR32F, kR16F = hipblaslt::kR16F, kR16BF = hipblaslt::kR16BF;
  static constexpr int kCompute32F = hipblaslt::kCompute32F;
  static constexpr std::int32_t kOpN = hipblaslt::kOpN, kOpT = hipblaslt::kOpT;
  static constexpr int kDescTransA = hipblaslt::kDescTransA, kDescTransB = hipblaslt::kDescTransB;
  static constexpr int kLayoutBatchCount = hipblaslt::kLayoutBatchCount;
  static constexpr int kLayoutStridedBatchOffset = hipblaslt::kLayoutStridedBatchOffset;
  static constexpr int kPrefMaxWorkspaceBytes = hipblaslt::kPrefMaxWorkspaceBytes;

  static const Result<const Api*>& load() { return hipblaslt::load(); }
  /// hipBLASLt has no status string without a GPU: "hipblasStatus_t 7".
  static std::string status_text(const Api&, StatusCode st) {
    return "hipblasStatus_t " + std::to_string(st);
  }
  static Status make_current(Device& device);
  static Result<void*> address(const Buffer& buffer);
  static Result<double> timed_call(Device& device, const std::function<Status(void*)>& call);
  static Status enqueued_call(Device& device, const std::function<Status(void*)>& call);

  /// kUnsupported for any epilogue: kforge binds none of hipBLASLt's.
  static Status set_epilogue(const Problem& p, BlasLtShape& s);
  /// An algorithm's bytes as stored: hex.
  static nlohmann::json algo_json(const Api& api, const Algo& algo);
  /// The algorithm of a stored call ("algo": its bytes, "workspace_bytes"),
  /// bound as it is; nullopt where none is stored or it does not read back.
  static Result<std::optional<BlasLtChoice<HipblasLt>>> replay(const BlasLtObjects<HipblasLt>& o,
                                                               const BlasLtShape& s,
                                                               const nlohmann::json& stored);
};

}  // namespace kforge
