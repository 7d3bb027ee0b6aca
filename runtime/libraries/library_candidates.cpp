// Which library each library template calls, and binding its calls: one
// table of (library, operator) bindings; a new vendor library is a row.
#include "runtime/libraries/library_candidates.hpp"

#include "runtime/libraries/blaslt_gemm.hpp"
#include "runtime/libraries/clblast_api.hpp"
#include "runtime/libraries/clblast_gemm.hpp"
#include "runtime/libraries/cublaslt_traits.hpp"
#include "runtime/libraries/hipblaslt_traits.hpp"

namespace kforge {

namespace {

/// What a loaded library API says of itself: its identity, or why it is unavailable.
template <typename Loaded>
LibraryAvailability availability_of(const Loaded& api) {
  if (!api.ok()) return {"", "unavailable: " + api.error().message};
  return {(*api)->identity, ""};
}

/// One vendor library's binding of one operator: a row per (library, operator).
struct LibraryBinding {
  std::string_view library;  ///< the manifest's `library`
  std::string_view op;
  LibraryAvailability (*availability)();
  Result<std::unique_ptr<Kernel>> (*bind)(Device& device, const Problem& problem, const Config& config,
                                          const std::string& name, const nlohmann::json& stored);
};

constexpr LibraryBinding kBindings[] = {
    {"clblast", "gemm", [] { return availability_of(clblast::load()); },
     [](Device& d, const Problem& p, const Config& c, const std::string& n, const nlohmann::json&) {
       return bind_clblast_gemm(d, p, c, n);  // CLBlast leaves no choice to replay
     }},
    {"cublaslt", "gemm", [] { return availability_of(CublasLt::load()); }, &bind_blaslt_gemm<CublasLt>},
    {"hipblaslt", "gemm", [] { return availability_of(HipblasLt::load()); }, &bind_blaslt_gemm<HipblasLt>},
};

}  // namespace

LibraryAvailability library_availability(std::string_view library) {
  for (const LibraryBinding& b : kBindings)
    if (b.library == library) return b.availability();
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
  for (const LibraryBinding& b : kBindings)
    if (b.library == m.library && b.op == m.op) return b.bind(device, problem, config, inst.kernel_name, stored);
  return Error{ErrorCode::kUnsupported, m.name + ": no " + m.library + " binding for operator " + m.op, {}};
}

}  // namespace kforge
