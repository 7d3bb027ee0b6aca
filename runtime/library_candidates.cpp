// Which library each library template calls, and binding its calls.
#include "library_candidates.hpp"

#include "clblast_api.hpp"
#include "clblast_gemm.hpp"
#include "cublaslt_api.hpp"
#include "cublaslt_gemm.hpp"
#include "hipblaslt_api.hpp"
#include "hipblaslt_gemm.hpp"

namespace kforge {

LibraryAvailability library_availability(std::string_view library) {
  if (library == "clblast") {
    const auto& api = clblast::load();
    if (!api.ok()) return {"", "unavailable: " + api.error().message};
    return {(*api)->identity, ""};
  }
  if (library == "cublaslt") {
    const auto& api = cublaslt::load();
    if (!api.ok()) return {"", "unavailable: " + api.error().message};
    return {(*api)->identity, ""};
  }
  if (library == "hipblaslt") {
    const auto& api = hipblaslt::load();
    if (!api.ok()) return {"", "unavailable: " + api.error().message};
    return {(*api)->identity, ""};
  }
  return {"", "unavailable: this kforge has no binding for library '" + std::string(library) + "'"};
}

void resolve_library(TemplateSource& tpl) {
  if (!tpl.manifest.is_library()) return;
  LibraryAvailability a = library_availability(tpl.manifest.library);
  tpl.library_identity = std::move(a.identity);
  tpl.library_unavailable = a.unavailable.empty() ? "" : tpl.manifest.name + ": " + a.unavailable;
}

Result<std::unique_ptr<Kernel>> bind_library_call(Device& device, const TemplateSource& tpl,
                                                  const Instance& inst, const Problem& problem,
                                                  const Config& config, const nlohmann::json& stored) {
  if (!tpl.library_unavailable.empty()) return Error{ErrorCode::kUnsupported, tpl.library_unavailable, {}};
  const TemplateManifest& m = tpl.manifest;
  if (m.library == "clblast" && m.op == "gemm")
    return bind_clblast_gemm(device, problem, config, inst.kernel_name);
  if (m.library == "cublaslt" && m.op == "gemm")
    return bind_cublaslt_gemm(device, problem, config, inst.kernel_name, stored);
  if (m.library == "hipblaslt" && m.op == "gemm")
    return bind_hipblaslt_gemm(device, problem, config, inst.kernel_name, stored);
  return Error{ErrorCode::kUnsupported, m.name + ": no " + m.library + " binding for operator " + m.op, {}};
}

}  // namespace kforge
