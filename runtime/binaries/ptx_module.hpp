// A PTX module read as text: its .version/.target header and, per .entry,
// the opcodes of its instructions in order (labels, directives, predicates
// and operands stripped).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

struct PtxEntry {
  std::string name;
  /// Opcodes with their modifiers, one per instruction: "ld.global.nc.v4.u32", "bra.uni".
  std::vector<std::string> opcodes;
  std::array<std::int64_t, 3> maxntid = {-1, -1, -1};  ///< .maxntid, -1 when absent
  std::array<std::int64_t, 3> reqntid = {-1, -1, -1};  ///< .reqntid, -1 when absent
};

struct PtxModule {
  std::string version;       ///< .version, e.g. "9.0"
  std::string target;        ///< .target, e.g. "sm_90"
  std::string address_size;  ///< .address_size, e.g. "64"
  std::vector<PtxEntry> entries;
};

/// True when `text` has the .version and .target directives every PTX module starts with.
bool looks_like_ptx(std::string_view text);

/// Parses the entries of a PTX module; kBadInput for text without a .version
/// or whose entry bodies are not closed.
Result<PtxModule> parse_ptx(std::string_view text);

}  // namespace kforge
