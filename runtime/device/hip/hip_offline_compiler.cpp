// clang-22 as a subprocess: source and header into a private directory, the
// code object back, its metadata read with LLVM 15's reader.
#include "runtime/device/hip/hip_offline_compiler.hpp"

#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "runtime/device/hip/hip_offline_header.hpp"
#include "runtime/platform/scratch_dir.hpp"
#include "runtime/platform/subprocess.hpp"

#ifndef KFORGE_HIP_DEVICE_LIB_DIR
#define KFORGE_HIP_DEVICE_LIB_DIR ""
#endif

namespace kforge {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

Result<OfflineHipToolchain> find_offline_hip_toolchain(const std::string& requested,
                                                       const std::string& device_libs) {
  OfflineHipToolchain t;
  t.clang = find_program(requested);
  if (t.clang.empty()) {
    return Error{ErrorCode::kUnsupported,
                 requested + " not found (install clang-22 lld-22 llvm-22: tools/deps.sh)",
                 {}};
  }
  KF_TRY_ASSIGN(ran, run_subprocess({t.clang, "--version"}));
  std::smatch m;
  if (ran.exit_code != 0 || !std::regex_search(ran.output, m, std::regex(R"(clang version (\S+))"))) {
    return Error{ErrorCode::kUnsupported, t.clang + " --version does not say which clang it is", ran.output};
  }
  t.version = m[1];
  t.device_libs = device_libs;
  if (t.device_libs.empty() || !fs::exists(fs::path(t.device_libs) / "oclc_isa_version_942.bc")) {
    return Error{ErrorCode::kUnsupported,
                 "no ROCm device libraries with oclc_isa_version_942.bc" +
                     (t.device_libs.empty() ? std::string(" (install rocm-device-libs and rebuild kforge)")
                                            : " in " + t.device_libs),
                 {}};
  }
  return t;
}

namespace {

Status write_text(const fs::path& p, std::string_view text) {
  std::ofstream f(p, std::ios::binary);
  f.write(text.data(), static_cast<std::streamsize>(text.size()));
  return f ? ok_status() : Status(Error::internal("cannot write " + p.string()));
}

std::vector<std::string> command(const OfflineHipToolchain& t, const std::string& arch, const fs::path& dir,
                                 const std::string& options) {
  // Debian's device libraries predate clang 22's own denormal handling, so
  // oclc_daz_opt_off (f32 denormals kept, as hipRTC) is linked explicitly.
  std::vector<std::string> cmd = {t.clang,
                                  "-x",
                                  "hip",
                                  "--offload-arch=" + arch,
                                  "--cuda-device-only",
                                  "--no-gpu-bundle-output",
                                  "-nogpuinc",
                                  "-include",
                                  (dir / "kforge_hip_runtime.h").string(),
                                  "--rocm-device-lib-path=" + t.device_libs,
                                  "-Xclang",
                                  "-mlink-builtin-bitcode",
                                  "-Xclang",
                                  (fs::path(t.device_libs) / "oclc_daz_opt_off.bc").string(),
                                  "-mcode-object-version=5",
                                  "-O3",
                                  "-std=c++17"};
  std::istringstream in(options);
  for (std::string o; in >> o;) cmd.push_back(o);
  cmd.insert(cmd.end(), {"-o", (dir / "out.co").string(), (dir / "in.hip").string()});
  return cmd;
}

std::string first_error_line(const std::string& log) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos) return line;
  return log.substr(0, log.find('\n'));
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

}  // namespace

const Result<OfflineHipToolchain>& offline_hip_toolchain() {
  static const Result<OfflineHipToolchain> t = find_offline_hip_toolchain(
      env_or("KFORGE_HIP_CLANG", "clang-22"), env_or("KFORGE_HIP_DEVICE_LIBS", KFORGE_HIP_DEVICE_LIB_DIR));
  return t;
}

Result<std::string> offline_hip_version() {
  const auto& t = offline_hip_toolchain();
  if (!t.ok()) return t.error();
  return "clang " + t->version + " (offline)";
}

Result<HiprtcOutput> offline_hip_compile(const std::string& source, const std::string& kernel_name,
                                         const std::string& arch, const std::string& options) {
  const auto& toolchain = offline_hip_toolchain();
  if (!toolchain.ok()) return toolchain.error();
  const auto t0 = std::chrono::steady_clock::now();
  KF_TRY_ASSIGN(path, make_scratch_dir("kforge-hip"));
  const ScratchDir dir{path};
  KF_TRY(write_text(dir.path / "kforge_hip_runtime.h", hip_offline_header()));
  KF_TRY(write_text(dir.path / "in.hip", source));
  const std::vector<std::string> cmd = command(*toolchain, arch, dir.path, options);
  KF_TRY_ASSIGN(ran, run_subprocess(cmd));
  if (ran.exit_code != 0) {
    return Error{ErrorCode::kCompile,
                 "build failed for " + kernel_name + " (" + arch + "): " + first_error_line(ran.output),
                 "command: " + joined(cmd) + "\n" + ran.output};
  }
  HiprtcOutput out;
  {
    std::ifstream f(dir.path / "out.co", std::ios::binary);
    out.kernel.binary.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    out.kernel.format = BinaryFormat::kHsaco;
  }
  if (out.kernel.binary.empty()) {
    return Error{ErrorCode::kCompile, "clang produced no code object for " + kernel_name + " (" + arch + ")",
                 ran.output};
  }
  auto co = read_amd_code_object(out.kernel.binary);
  if (co.ok()) {
    const AmdKernelMetadata* k = co->find(kernel_name);
    if (!k) {
      return Error{
          ErrorCode::kCompile,
          "build failed for " + kernel_name + ": no kernel named '" + kernel_name + "' in the code object",
          ran.output};
    }
    out.metadata = *k;
    out.kernel.resources = amd_resource_report(*k);
  } else if (co.error().code != ErrorCode::kUnsupported) {
    return Error{ErrorCode::kCompile, "clang output for " + kernel_name + ": " + co.error().message,
                 ran.output};
  }
  out.kernel.kernel_name = kernel_name;
  out.kernel.log = std::move(ran.output);
  out.kernel.options = joined(std::vector<std::string>(cmd.begin() + 1, cmd.end()));
  out.kernel.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kforge
