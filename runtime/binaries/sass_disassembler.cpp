// Runs nvdisasm on a cubin written to a temporary file and parses its listing.
#include "runtime/binaries/sass_disassembler.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/platform/subprocess.hpp"

namespace kforge {

namespace {

namespace fs = std::filesystem;

bool is_executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* p = std::getenv(var)) dirs.push_back(fs::path(p) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream s(path);
    for (std::string dir; std::getline(s, dir, ':');)
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  return dirs;
}

/// A file that is removed when this goes out of scope.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    std::string pattern = (fs::temp_directory_path() / ("kforge-sass-XXXXXX" + suffix)).string();
    const int fd = ::mkstemps(pattern.data(), static_cast<int>(suffix.size()));
    if (fd >= 0) {
      ::close(fd);
      path_ = pattern;
    }
  }
  ~TempFile() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// "/*0080*/   @!P0 HMMA.16816.F32 R4, R8, R12, R4 ;" -> the instruction; false for other lines.
bool parse_instruction(std::string_view line, SassInstruction& out) {
  line = trim(line);
  if (line.substr(0, 2) != "/*") return false;
  const auto close = line.find("*/");
  if (close == std::string_view::npos) return false;
  const std::string offset(line.substr(2, close - 2));
  char* end = nullptr;
  out.offset = std::strtoull(offset.c_str(), &end, 16);
  if (offset.empty() || *end != '\0') return false;
  std::string_view body = trim(line.substr(close + 2));
  if (const auto semi = body.rfind(';'); semi != std::string_view::npos) body = trim(body.substr(0, semi));
  if (body.empty()) return false;
  out.text = std::string(body);
  if (body.front() == '@') {  // a predicate guard: "@P0", "@!PT"
    const auto space = body.find_first_of(" \t");
    body = space == std::string_view::npos ? std::string_view{} : trim(body.substr(space));
  }
  out.mnemonic = std::string(body.substr(0, body.find_first_of(" \t")));
  return !out.mnemonic.empty();
}

}  // namespace

Result<std::string> find_nvdisasm() {
  if (const char* set = std::getenv("KFORGE_NVDISASM"); set && *set) {
    if (!is_executable(set))
      return Error::bad_input(std::string("KFORGE_NVDISASM: '") + set + "' is not an executable file");
    return std::string(set);
  }
  for (const auto& dir : search_dirs())
    if (is_executable(dir / "nvdisasm")) return (dir / "nvdisasm").string();
  return Error{ErrorCode::kNotFound,
               "nvdisasm not found in $CUDA_PATH/bin, /usr/local/cuda/bin or $PATH (set KFORGE_NVDISASM, or "
               "pip install nvidia-cuda-nvdisasm and put its nvidia/cu13/bin on PATH)",
               {}};
}

Result<std::vector<SassFunction>> parse_sass(std::string_view listing) {
  std::vector<SassFunction> functions;
  std::istringstream lines{std::string(listing)};
  for (std::string line; std::getline(lines, line);) {
    const std::string_view t = trim(line);
    if (t.substr(0, 6) == ".text." && t.back() == ':') {
      functions.push_back({std::string(t.substr(6, t.size() - 7)), {}});
      continue;
    }
    SassInstruction inst;
    if (!functions.empty() && parse_instruction(t, inst))
      functions.back().instructions.push_back(std::move(inst));
  }
  if (functions.empty()) return Error::bad_input("nvdisasm's listing has no .text.<kernel> section");
  // A function's code is padded with NOPs to its section's alignment: not code that runs.
  for (auto& fn : functions)
    while (!fn.instructions.empty() && fn.instructions.back().mnemonic == "NOP") fn.instructions.pop_back();
  return functions;
}

Result<std::vector<SassFunction>> disassemble_sass(std::span<const std::uint8_t> cubin) {
  KF_TRY_ASSIGN(nvdisasm, find_nvdisasm());
  const TempFile input(".cubin");
  if (input.path().empty()) {
    return Error{ErrorCode::kResource,
                 "cannot create a temporary file for nvdisasm in " + fs::temp_directory_path().string(),
                 {}};
  }
  {
    std::ofstream f(input.path(), std::ios::binary);
    f.write(reinterpret_cast<const char*>(cubin.data()), static_cast<std::streamsize>(cubin.size()));
    if (!f) return Error{ErrorCode::kResource, "cannot write " + input.path(), {}};
  }
  auto ran = run_subprocess({nvdisasm, "-c", input.path()});
  if (!ran.ok()) return Error{ErrorCode::kNotFound, "cannot run " + nvdisasm + ": " + ran.error().message, {}};
  if (ran->exit_code != 0) {
    return Error::bad_input("nvdisasm could not read the cubin (exit " + std::to_string(ran->exit_code) +
                            "): " + std::string(trim(ran->output)));
  }
  return parse_sass(ran->output);
}

}  // namespace kforge
