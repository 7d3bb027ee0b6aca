// dlopen of cuBLASLt and its identity: the version cublasLtGetVersion()
// reports (the library links its CUDA runtime statically, so this needs no
// driver), the file the loader opened and its size.
#include "runtime/libraries/cublaslt_api.hpp"

#include <array>
#include <cstdlib>

#include "runtime/platform/dynamic_library.hpp"

namespace kforge::cublaslt {

namespace {

/// The symbols, in the order bind_all binds them (Api's fields).
constexpr std::array<const char*, 19> kSymbols = {
    "cublasLtCreate",
    "cublasLtDestroy",
    "cublasLtGetVersion",
    "cublasLtGetStatusString",
    "cublasLtMatmulDescCreate",
    "cublasLtMatmulDescDestroy",
    "cublasLtMatmulDescSetAttribute",
    "cublasLtMatrixLayoutCreate",
    "cublasLtMatrixLayoutDestroy",
    "cublasLtMatrixLayoutSetAttribute",
    "cublasLtMatmulPreferenceCreate",
    "cublasLtMatmulPreferenceDestroy",
    "cublasLtMatmulPreferenceSetAttribute",
    "cublasLtMatmulAlgoGetHeuristic",
    "cublasLtMatmulAlgoInit",
    "cublasLtMatmulAlgoCheck",
    "cublasLtMatmulAlgoConfigSetAttribute",
    "cublasLtMatmulAlgoConfigGetAttribute",
    "cublasLtMatmul",
};

constexpr std::array<AlgoField, 9> kAlgoFields = {{
    {"id", kConfigId, 4},
    {"tile", kConfigTileId, 4},
    {"stages", kConfigStagesId, 4},
    {"splitk", kConfigSplitkNum, 4},
    {"reduction", kConfigReductionScheme, 4},
    {"swizzle", kConfigCtaSwizzling, 4},
    {"custom", kConfigCustomOption, 4},
    {"inner_shape", kConfigInnerShapeId, 2},
    {"cluster_shape", kConfigClusterShapeId, 2},
}};

Status bind_all(const DynamicLibrary& lib, Api& api) {
  std::size_t i = 0;
  KF_TRY(lib.bind(api.create, kSymbols[i++]));
  KF_TRY(lib.bind(api.destroy, kSymbols[i++]));
  KF_TRY(lib.bind(api.get_version, kSymbols[i++]));
  KF_TRY(lib.bind(api.get_status_string, kSymbols[i++]));
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
  KF_TRY(lib.bind(api.algo_init, kSymbols[i++]));
  KF_TRY(lib.bind(api.algo_check, kSymbols[i++]));
  KF_TRY(lib.bind(api.algo_config_set_attribute, kSymbols[i++]));
  KF_TRY(lib.bind(api.algo_config_get_attribute, kSymbols[i++]));
  KF_TRY(lib.bind(api.matmul, kSymbols[i++]));
  if (i != kSymbols.size()) return Error::internal("cublaslt: symbol table and bindings disagree");
  return ok_status();
}

std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("CUDA_PATH")) dirs.push_back(p);
  dirs.push_back("/usr/local/cuda");
  return dirs;
}

}  // namespace

std::span<const AlgoField> algo_fields() {
  return kAlgoFields;
}

std::span<const char* const> symbol_names() {
  return kSymbols;
}

std::string version_text(std::size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

std::vector<std::string> library_files() {
  if (const char* env = std::getenv("KFORGE_CUBLASLT_LIBRARY"); env && *env) return {env};
  return library_candidates({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, "KFORGE_CUDA_PATH",
                            toolkit_dirs());
}

Result<const Api*> load_from(const std::vector<std::string>& files) {
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("cuBLASLt", files));
  Api api;
  KF_TRY(bind_all(lib, api));
  const LoadedFile file = loaded_file(lib, reinterpret_cast<void*>(api.get_version));
  api.identity = "cublaslt " + version_text(api.get_version()) + " (" + file.text() + ")";
  // Kept for the process, as the library is (DynamicLibrary never closes).
  return new Api(std::move(api));
}

const Result<const Api*>& load() {
  return load_once<Api>(library_files(), load_from);
}

std::string status_text(const Api& api, StatusCode status) {
  const char* s = api.get_status_string ? api.get_status_string(status) : nullptr;
  return std::string(s ? s : "cublasStatus_t") + " (" + std::to_string(status) + ")";
}

}  // namespace kforge::cublaslt
