// The exported winners' compiled binaries, beside an export (docs/export.md,
// "Binaries"): each winner's result names the binary cache entry its kernel
// was kept under (resources_json "binary_key"), and those entries are copied
// from the tuner's cache in the cache's own layout. A program whose lookup
// uses the copy as its cache directory loads them without compiling, where
// its compiler and device match the tuner's: the key each entry carries is
// compared on every read, and a mismatch is a miss that compiles as before.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"
#include "db/tuning_set.hpp"

namespace kforge::report {

struct BinaryExport {
  int copied = 0;
  /// Winners whose binary could not be copied, one line each: "TEMPLATE
  /// CONFIG for PROBLEM: why" (not in the cache, a malformed key).
  std::vector<std::string> missing;
};

/// Copies the binary of every winner in `set` from the binary cache in
/// `cache_dir` into `out_dir` (created if needed). kBadInput naming
/// `out_dir` where it cannot be created or written.
Result<BinaryExport> export_binaries(const TuningSet& set, const std::string& cache_dir, const std::string& out_dir);

}  // namespace kforge::report
