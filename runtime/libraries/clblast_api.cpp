// dlopen of CLBlast and its identity: the version is the one the loaded
// file's real name carries (libclblast.so.1.5.3); the size tells apart two
// builds of one version.
#include "runtime/libraries/clblast_api.hpp"

#include "runtime/platform/dynamic_library.hpp"

namespace kforge::clblast {

namespace {

Result<const Api*> load_from(const std::vector<std::string>& candidates) {
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("CLBlast", candidates));
  Api api;
  KF_TRY(lib.bind(api.sgemm, "CLBlastSgemm"));
  KF_TRY(lib.bind(api.sgemm_strided_batched, "CLBlastSgemmStridedBatched"));
  const LoadedFile file = loaded_file(lib, reinterpret_cast<void*>(api.sgemm));
  api.identity = "clblast " + file.so_version() + " (" + file.text() + ")";
  // Kept for the process, as the library is (DynamicLibrary never closes):
  // one per candidate list load_once was asked for.
  return new Api(std::move(api));
}

}  // namespace

std::vector<std::string> library_files() {
  return kforge::library_files("", "KFORGE_CLBLAST_LIBRARY", {"libclblast.so.1", "libclblast.so"});
}

const Result<const Api*>& load() {
  return load_once<Api>(library_files(), load_from);
}

}  // namespace kforge::clblast
