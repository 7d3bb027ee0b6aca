// What the kforge binary was built from, recorded with every sweep. The
// definitions are generated at build time (cmake/WriteBuildVersion.cmake).
#pragma once

#include <string>

namespace kforge {

/// The tool's version (the CMake project version).
const char* tool_version();
/// The git revision of the sources at build time: 12 hex digits, with
/// "-dirty" when tracked files had changes; "unknown" outside a git checkout.
const char* git_revision();
/// "kforge 0.1.0 (1a2b3c4d5e6f)": what --version prints and exports record.
inline std::string version_line() { return std::string("kforge ") + tool_version() + " (" + git_revision() + ")"; }

}  // namespace kforge
