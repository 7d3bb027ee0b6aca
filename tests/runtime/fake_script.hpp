// The script file the fake vendor libraries (fake_nvml.cpp, fake_rocm_smi.cpp)
// answer from: one reading or fact per line, its first word saying which.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace kforge::test {

/// Calls on_line(kind, words) for every line of the file named by the
/// environment variable `env_var`: its first word, then the rest to read.
/// False when the variable is not set.
template <class Fn>
bool for_each_script_line(const char* env_var, Fn&& on_line) {
  const char* path = std::getenv(env_var);
  if (!path) return false;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    words >> kind;
    on_line(kind, words);
  }
  return true;
}

}  // namespace kforge::test
