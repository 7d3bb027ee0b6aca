// A worker's stderr, passed on to the tuner's without the compiler's
// "N warnings generated." lines: PoCL's clang prints that count on stderr
// while the warnings' text goes to the build log (stored with each result,
// `compile_log`), so alone it says nothing a user can act on.
#pragma once

#include <string_view>

namespace kforge {

/// True for clang's diagnostic count, e.g. "2 warnings generated." or
/// "1 warning and 1 error generated.".
bool is_diagnostic_count(std::string_view line);

/// A pipe whose lines a detached thread copies to this process's stderr,
/// leaving out diagnostic counts, until every writer has closed it. Returns
/// the write end (close-on-exec; dup2 it onto a child's 2, then close it
/// here), or -1 when no pipe or thread could be made (the caller then
/// leaves the child's stderr as it is).
int start_stderr_relay();

}  // namespace kforge
