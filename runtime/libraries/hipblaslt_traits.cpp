// hipBLASLt's part of the shared BLASLt gemm: the HIP device's calls, and an
// algorithm stored as the hex of its opaque bytes.
#include "runtime/libraries/hipblaslt_traits.hpp"

#include <cstdio>

#include "runtime/device/hip/hip_backend.hpp"

namespace kforge {

namespace {

std::string hex(const std::uint8_t* bytes, std::size_t n) {
  std::string out;
  char buf[3];
  for (std::size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", bytes[i]);
    out += buf;
  }
  return out;
}

bool unhex(const std::string& text, std::uint8_t* bytes, std::size_t n) {
  if (text.size() != 2 * n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned v = 0;
    if (std::sscanf(text.c_str() + 2 * i, "%2x", &v) != 1) return false;
    bytes[i] = static_cast<std::uint8_t>(v);
  }
  return true;
}

}  // namespace

Status HipblasLt::make_current(Device& device) {
  return hip_make_current(device);
}

Result<void*> HipblasLt::address(const Buffer& buffer) {
  return hip_buffer_address(buffer);
}

Result<double> HipblasLt::timed_call(Device& device, const std::function<Status(void*)>& call) {
  return hip_timed_call(device, call);
}

Status HipblasLt::enqueued_call(Device& device, const std::function<Status(void*)>& call) {
  return hip_enqueued_call(device, call);
}

Status HipblasLt::set_epilogue(const Problem& p, BlasLtShape&) {
  if (!p.epilogue.plain())
    return Error{ErrorCode::kUnsupported, "hipblaslt: kforge binds no epilogue of hipBLASLt", {}};
  return ok_status();
}

nlohmann::json HipblasLt::algo_json(const Api&, const Algo& algo) {
  return hex(algo.data, sizeof algo.data);
}

Result<std::optional<BlasLtChoice<HipblasLt>>> HipblasLt::replay(const BlasLtObjects<HipblasLt>&,
                                                                 const BlasLtShape&,
                                                                 const nlohmann::json& stored) {
  BlasLtChoice<HipblasLt> choice;
  if (!stored.is_object() || !stored.value("algo", nlohmann::json()).is_string() ||
      !stored.value("workspace_bytes", nlohmann::json()).is_number_unsigned() ||
      !unhex(stored["algo"].get<std::string>(), choice.algo.data, sizeof choice.algo.data))
    return std::optional<BlasLtChoice<HipblasLt>>();
  choice.workspace = stored["workspace_bytes"].get<std::size_t>();
  choice.algo.max_workspace_bytes = choice.workspace;
  return std::optional<BlasLtChoice<HipblasLt>>(choice);
}

}  // namespace kforge
