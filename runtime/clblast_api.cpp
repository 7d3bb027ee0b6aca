// dlopen of CLBlast and its identity: the version is the one the loaded
// file's real name carries (libclblast.so.1.5.3); the size tells apart two
// builds of one version.
#include "clblast_api.hpp"

#include <dlfcn.h>

#include <filesystem>

#include "dynamic_library.hpp"

namespace kforge::clblast {

namespace {

/// "1.5.3" from ".../libclblast.so.1.5.3"; "unknown version" when the name has none.
std::string version_of(const std::filesystem::path& real) {
  const std::string name = real.filename().string();
  const auto at = name.find(".so.");
  return at == std::string::npos ? "unknown version" : name.substr(at + 4);
}

/// The file the loader opened: `path` itself when absolute, else found on its search path.
std::filesystem::path loaded_file(const DynamicLibrary& lib, void* symbol) {
  Dl_info info{};
  if (dladdr(symbol, &info) != 0 && info.dli_fname) return info.dli_fname;
  return lib.path();
}

Result<const Api*> load_from(const std::vector<std::string>& candidates) {
  KF_TRY_ASSIGN(lib, DynamicLibrary::open("CLBlast", candidates));
  Api api;
  KF_TRY(lib.bind(api.sgemm, "CLBlastSgemm"));
  KF_TRY(lib.bind(api.sgemm_strided_batched, "CLBlastSgemmStridedBatched"));
  std::error_code ec;
  const std::filesystem::path file = loaded_file(lib, reinterpret_cast<void*>(api.sgemm));
  const std::filesystem::path real = std::filesystem::canonical(file, ec);
  const std::filesystem::path shown = ec ? file : real;
  const auto size = std::filesystem::file_size(shown, ec);
  api.identity = "clblast " + version_of(shown) + " (" + shown.string() +
                 (ec ? std::string() : ", " + std::to_string(size) + " bytes") + ")";
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
