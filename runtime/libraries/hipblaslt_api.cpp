// dlopen of hipBLASLt and its identity: the version the loaded file's real
// name carries, and the file's size.
#include "runtime/libraries/hipblaslt_api.hpp"

#include <array>
#include <cstdlib>

#include "runtime/platform/dynamic_library.hpp"

namespace kforge::hipblaslt {

namespace {

/// The symbols, in the order bind_all binds them (Api's fields).
constexpr std::array<const char*, 13> kSymbols = {
    "hipblasLtCreate",
    "hipblasLtDestroy",
    "hipblasLtMatmulDescCreate",
    "hipblasLtMatmulDescDestroy",
    "hipblasLtMatmulDescSetAttribute",
    "hipblasLtMatrixLayoutCreate",
    "hipblasLtMatrixLayoutDestroy",
    "hipblasLtMatrixLayoutSetAttribute",
    "hipblasLtMatmulPreferenceCreate",
    "hipblasLtMatmulPreferenceDestroy",
    "hipblasLtMatmulPreferenceSetAttribute",
    "hipblasLtMatmulAlgoGetHeuristic",
    "hipblasLtMatmul",
};

Status bind_all(const DynamicLibrary& lib, Api& api) {
  std::size_t i = 0;
  KF_TRY(lib.bind(api.create, kSymbols[i++]));
  KF_TRY(lib.bind(api.destroy, kSymbols[i++]));
  KF_TRY(lib.bind(api.matmul_desc_create, kSymbols[i++]));
  KF_TRY(lib.bind(api.matmul_desc_destroy, kSymbols[i++]));
  KF_TRY(lib.bind(api.matmul_desc_set_attribute, kSymbols[i++]));
  KF_TRY(lib.bind(api.matrix_layout_create, kSymbols[i++]));
  KF_TRY(lib.bind(api.matrix_layout_destroy, kSymbols[i++]));
  KF_TRY(lib.bind(api.matrix_layout_set_attribute, kSymbols[i++]));
  KF_TRY(lib.bind(api.preference_create, kSymbols[i++]));
  KF_TRY(lib.bind(api.preference_destroy, kSymbols[i++]));
  KF_TRY(lib.bind(api.preference_set_attribute, kSymbols[i++]));
  KF_TRY(lib.bind(api.algo_get_heuristic, kSymbols[i++]));
  KF_TRY(lib.bind(api.matmul, kSymbols[i++]));
  if (i != kSymbols.size()) return Error::internal("hipblaslt: symbol table and bindings disagree");
  return ok_status();
}

std::vector<std::string> rocm_dirs() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("ROCM_PATH")) dirs.push_back(p);
  dirs.push_back("/opt/rocm");
  return dirs;
}

}  // namespace

std::span<const char* const> symbol_names() {
  return kSymbols;
}

std::vector<std::string> library_files() {
  if (const char* env = std::getenv("KFORGE_HIPBLASLT_LIBRARY"); env && *env) return {env};
  return library_candidates({"libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so"}, "KFORGE_ROCM_PATH",
                            rocm_dirs());
}

Result<const Api*> load_from(const std::vector<std::string>& files) {
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("hipBLASLt", files));
  Api api;
  KF_TRY(bind_all(lib, api));
  const LoadedFile file = loaded_file(lib, reinterpret_cast<void*>(api.create));
  api.identity = "hipblaslt " + file.so_version() + " (" + file.text() + ")";
  // Kept for the process, as the library is (DynamicLibrary never closes).
  return new Api(std::move(api));
}

const Result<const Api*>& load() {
  return load_once<Api>(library_files(), load_from);
}

}  // namespace kforge::hipblaslt
