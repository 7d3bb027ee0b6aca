// Where kforge finds the Triton helpers it runs as child processes
// (triton/kforge_triton: compile, sweep): the tuner's triton kind and
// `kforge compile --triton` both run them this way.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace kforge {

/// The Python that runs the helpers: $KFORGE_PYTHON, else python3.
std::string triton_python();
/// The directory holding kforge_triton: $KFORGE_TRITON_HELPERS, else the source tree's triton/.
std::string triton_helper_dir();
/// argv running triton_python() with `args` and the helpers importable.
std::vector<std::string> triton_helper_command(const std::vector<std::string>& args);

/// Runs `python -m kforge_triton.<helper> REQUEST RESPONSE` on `request`,
/// with both files in `dir`, and returns the response object. `failure`
/// is the error code when the helper did not answer (it crashed, or wrote
/// no JSON object); an answer saying `"ok": false` is returned as it is.
Result<nlohmann::json> run_triton_helper(const std::string& helper, const nlohmann::json& request,
                                         const std::filesystem::path& dir, ErrorCode failure);

/// Why Triton and the helpers cannot be imported by triton_python() ("" when
/// they can), asked once per process.
const std::string& triton_missing();
/// triton.__version__ ("3.9.0"); empty where triton_missing() is not.
const std::string& triton_version();

}  // namespace kforge
