// cuBLASLt's part of the shared BLASLt gemm: the CUDA device's calls, the
// epilogue values, and an algorithm stored by its configuration fields.
#include "runtime/libraries/cublaslt_traits.hpp"

#include "runtime/device/cuda/cuda_backend.hpp"

namespace kforge {

namespace lt = cublaslt;

Status CublasLt::make_current(Device& device) {
  return cuda_make_current(device);
}

Result<void*> CublasLt::address(const Buffer& buffer) {
  KF_TRY_ASSIGN(address, cuda_buffer_address(buffer));
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(address));
}

Result<double> CublasLt::timed_call(Device& device, const std::function<Status(void*)>& call) {
  return cuda_timed_call(device, call);
}

Status CublasLt::enqueued_call(Device& device, const std::function<Status(void*)>& call) {
  return cuda_enqueued_call(device, call);
}

Status CublasLt::set_epilogue(const Problem& p, BlasLtShape& s) {
  // kforge's bias[j] runs along C's columns: the rows of cuBLASLt's C^T,
  // which is what its bias epilogue adds, after alpha and beta as kforge does.
  const bool relu = p.epilogue.activation == Activation::kRelu;
  if (p.epilogue.activation != Activation::kNone && !relu)
    return Error{ErrorCode::kUnsupported,
                 "cublaslt: no epilogue computes " + std::string(activation_name(p.epilogue.activation)) +
                     " as kforge defines it",
                 {}};
  s.bias = p.epilogue.bias;
  s.epilogue = s.bias ? (relu ? lt::kEpilogueReluBias : lt::kEpilogueBias)
                      : (relu ? lt::kEpilogueRelu : lt::kEpilogueDefault);
  return ok_status();
}

nlohmann::json CublasLt::algo_json(const Api& api, const Algo& algo) {
  nlohmann::json j = nlohmann::json::object();
  for (const lt::AlgoField& f : lt::algo_fields()) {
    std::uint32_t v32 = 0;
    std::uint16_t v16 = 0;
    void* buf = f.bytes == 2 ? static_cast<void*>(&v16) : static_cast<void*>(&v32);
    std::size_t written = 0;
    if (api.algo_config_get_attribute(&algo, f.attribute, buf, f.bytes, &written) != lt::kSuccess) continue;
    j[f.name] = f.bytes == 2 ? std::int64_t{v16} : std::int64_t{static_cast<std::int32_t>(v32)};
  }
  return j;
}

namespace {

/// Sets a stored algorithm's fields other than its ID (AlgoInit's) on `algo`.
Status set_fields(const lt::Api& api, lt::Algo& algo, const nlohmann::json& fields) {
  for (const lt::AlgoField& f : lt::algo_fields()) {
    if (f.attribute == lt::kConfigId || !fields.contains(f.name) || !fields[f.name].is_number_integer())
      continue;
    const auto value = fields[f.name].get<std::int64_t>();
    const auto v32 = static_cast<std::uint32_t>(value);
    const auto v16 = static_cast<std::uint16_t>(value);
    const void* buf = f.bytes == 2 ? static_cast<const void*>(&v16) : static_cast<const void*>(&v32);
    KF_TRY(blaslt_check<CublasLt>(api, api.algo_config_set_attribute(&algo, f.attribute, buf, f.bytes),
                                  "cublasLtMatmulAlgoConfigSetAttribute"));
  }
  return ok_status();
}

}  // namespace

Result<std::optional<BlasLtChoice<CublasLt>>> CublasLt::replay(const BlasLtObjects<CublasLt>& o,
                                                               const BlasLtShape& s,
                                                               const nlohmann::json& stored) {
  if (!stored.is_object() || !stored.contains("algo") || !stored["algo"].is_object())
    return std::optional<BlasLtChoice<CublasLt>>();
  const nlohmann::json& fields = stored["algo"];
  const lt::Api& api = o.api;
  if (!fields.contains("id") || !fields["id"].is_number_integer())
    return Error::bad_input("cublaslt: the stored algorithm has no integer id: " + fields.dump());
  lt::HeuristicResult r{};
  KF_TRY(blaslt_check<CublasLt>(api,
                                api.algo_init(o.handle, lt::kCompute32F, lt::kR32F, s.in_type, s.in_type,
                                              lt::kR32F, lt::kR32F, fields["id"].get<int>(), &r.algo),
                                "cublasLtMatmulAlgoInit"));
  KF_TRY(set_fields(api, r.algo, fields));
  KF_TRY(blaslt_check<CublasLt>(api, api.algo_check(o.handle, o.op, o.a, o.b, o.c, o.c, &r.algo, &r),
                                "cublasLtMatmulAlgoCheck"));
  return std::optional<BlasLtChoice<CublasLt>>(BlasLtChoice<CublasLt>{r.algo, r.workspace_size});
}

}  // namespace kforge
