// llvm-objdump-22 as a subprocess on a copy of the code object, its text parsed.
#include "runtime/binaries/amdgpu_objdump.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/platform/subprocess.hpp"

namespace kforge {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "0000000000001900 <k>:" -> address and symbol; false for any other line.
bool function_header(const std::string& line, AmdFunctionCode& fn) {
  const auto lt = line.find(" <");
  if (lt == std::string::npos || line.size() < lt + 4 || line.compare(line.size() - 2, 2, ">:") != 0)
    return false;
  fn = {};
  fn.symbol = line.substr(lt + 2, line.size() - lt - 4);
  fn.address = std::strtoull(line.substr(0, lt).c_str(), nullptr, 16);
  return true;
}

}  // namespace

std::vector<AmdFunctionCode> parse_objdump_output(const std::string& text) {
  std::vector<AmdFunctionCode> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    AmdFunctionCode fn;
    if (!line.empty() && line[0] != '\t' && function_header(line, fn)) {
      out.push_back(std::move(fn));
      continue;
    }
    if (out.empty() || line.empty() || line[0] != '\t') continue;
    const auto comment = line.find("//");
    const std::string inst = trim(line.substr(0, comment));
    if (inst.empty()) continue;
    AmdFunctionCode& f = out.back();
    // "// 000000001938: D2080002 00110502": the address, then the instruction's 32-bit words.
    std::uint64_t address = f.address + f.size, bytes = 4;
    if (const auto colon = line.find(':', comment == std::string::npos ? line.size() : comment);
        colon != std::string::npos) {
      address = std::strtoull(line.c_str() + comment + 2, nullptr, 16);
      std::istringstream words(line.substr(colon + 1));
      bytes = 0;
      for (std::string w; words >> w;) bytes += 4;
    }
    if (inst == "<unknown>") {
      f.undecoded_bytes += 4;
    } else {
      f.instructions.push_back({address, inst.substr(0, inst.find_first_of(" \t")), inst});
    }
    f.size = address + bytes - f.address;
  }
  return out;
}

Result<std::vector<AmdFunctionCode>> objdump_amdgpu_functions(std::span<const std::uint8_t> code_object) {
  const char* env = std::getenv("KFORGE_LLVM_OBJDUMP");
  const std::string program = env && *env ? env : "llvm-objdump-22";
  if (find_program(program).empty()) {
    return Error{ErrorCode::kUnsupported, program + " not found (install llvm-22: tools/deps.sh)", {}};
  }
  std::string path = (std::filesystem::temp_directory_path() / "kforge-co-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) return Error::internal("cannot create " + path);
  close(fd);
  struct Remove {
    std::string p;
    ~Remove() { std::filesystem::remove(p); }
  } remove{path};
  {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(code_object.data()),
            static_cast<std::streamsize>(code_object.size()));
    if (!f) return Error::internal("cannot write " + path);
  }
  KF_TRY_ASSIGN(ran, run_subprocess({program, "-d", path}));
  if (ran.exit_code != 0)
    return Error::bad_input(program + " -d failed: " + ran.output.substr(0, ran.output.find('\n')));
  return parse_objdump_output(ran.output);
}

}  // namespace kforge
