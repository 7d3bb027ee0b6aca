// A validation reference on disk, so that a restarted tuner worker reads the
// references its predecessor computed instead of computing them again: at
// GEMM 4096^3 the two double-precision references cost about 6 s on 16 host
// cores, and every sticky device error or timeout restarts the worker.
//
// Layout (host byte order: the file never leaves the machine that wrote it):
//   "KFREF001"  u64 key  u64 count  f64 tolerance  f64 value[count]
//   f64 scale[count]  u64 checksum (FNV-1a 64 over the 8-byte words before it)
// A file is written beside its final name and renamed into place, so a
// worker killed while writing leaves no file a reader could take.
#pragma once

#include <cstdint>
#include <string>

#include "generator/operator.hpp"

namespace kforge {

/// What a reference file must match: the operator's problem key, the
/// workload seed and the validation run kind. Another problem, seed or kind
/// gives another key.
std::uint64_t reference_key(const Problem& problem, std::uint64_t workload_seed, WorkloadKind kind);

/// Writes `reference` to `path` under `key`. On failure nothing is left at
/// `path` and the error names the file.
Status save_reference(const std::string& path, std::uint64_t key, const Reference& reference);

/// The reference stored at `path` under `key`. Not found when there is no
/// file; a bad-input error naming the file and what is wrong when it is
/// truncated, has another key or fails its checksum.
Result<Reference> load_reference(const std::string& path, std::uint64_t key);

}  // namespace kforge
