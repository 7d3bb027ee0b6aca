// The Triton helpers' interpreter and folder, from the environment.
#include "runtime/kinds/triton_helpers.hpp"

#include <cstdlib>
#include <fstream>
#include <mutex>

#include "runtime/platform/subprocess.hpp"

namespace kforge {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

/// What asking the helpers' Python for Triton found, once per process.
struct TritonProbe {
  std::string missing;  ///< why Triton cannot be used; empty when it can
  std::string version;  ///< triton.__version__ where it can
};

const TritonProbe& triton_probe() {
  static std::once_flag once;
  static TritonProbe probe;
  std::call_once(once, [] {
    auto r = run_subprocess(
        triton_helper_command({"-c", "import triton, kforge_triton.compile; print(triton.__version__)"}));
    std::string text = r.ok() ? r->output : r.error().message;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    const std::string last = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    if (r.ok() && r->exit_code == 0) {
      probe.version = last;
      return;
    }
    probe.missing = "Triton is not importable by " + triton_python() + " with the helpers in " +
                    triton_helper_dir() + " (pip install triton==3.9.0): " + last;
  });
  return probe;
}

}  // namespace

const std::string& triton_missing() { return triton_probe().missing; }
const std::string& triton_version() { return triton_probe().version; }

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

Result<nlohmann::json> run_triton_helper(const std::string& helper, const nlohmann::json& request,
                                         const std::filesystem::path& dir, ErrorCode failure) {
  const auto request_path = dir / "request.json", response_path = dir / "response.json";
  std::ofstream(request_path) << request.dump();
  KF_TRY_ASSIGN(run, run_subprocess(triton_helper_command({"-m", "kforge_triton." + helper, request_path.string(),
                                                           response_path.string()})));
  std::ifstream in(response_path);
  nlohmann::json response = nlohmann::json::parse(in, nullptr, false);
  if (run.exit_code != 0 || response.is_discarded() || !response.is_object())
    return Error{failure, "the Triton " + helper + " helper failed (exit " + std::to_string(run.exit_code) + ")",
                 run.output};
  return response;
}

}  // namespace kforge
