// The Triton helpers' interpreter and folder, from the environment.
#include "triton_helpers.hpp"

#include <cstdlib>

namespace kforge {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

std::string triton_python() { return env_or("KFORGE_PYTHON", "python3"); }

std::string triton_helper_dir() {
#ifdef KFORGE_TRITON_HELPER_DIR
  return env_or("KFORGE_TRITON_HELPERS", KFORGE_TRITON_HELPER_DIR);
#else
  return env_or("KFORGE_TRITON_HELPERS", "triton");
#endif
}

std::vector<std::string> triton_helper_command(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"env", "PYTHONPATH=" + triton_helper_dir(), triton_python()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace kforge
