// Category rules for amdgcn mnemonics, PTX and SASS opcodes (docs/inspect.md).
#include "runtime/binaries/instruction_mix.hpp"

#include <algorithm>
#include <initializer_list>
#include <map>

namespace kforge {

namespace {

bool starts(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

/// "ld.global.nc.v4.u32" -> {"ld", "global", "nc", "v4", "u32"}.
std::vector<std::string_view> dotted(std::string_view op) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto p = op.find('.');
    parts.push_back(op.substr(0, p));
    if (p == std::string_view::npos) return parts;
    op.remove_prefix(p + 1);
  }
}

/// The state space of a PTX ld/st: "global", "shared" or "" for any other.
std::string_view state_space(const std::vector<std::string_view>& parts) {
  for (auto p : parts) {
    if (p == "global") return "global";
    if (p == "shared" || starts(p, "shared::")) return "shared";
  }
  return "";
}

}  // namespace

std::int64_t InstructionMix::count(std::string_view category) const {
  for (const auto& [name, n] : categories)
    if (name == category) return n;
  return 0;
}

const std::vector<std::string>& mix_categories(Isa isa) {
  static const std::vector<std::string> amdgcn = {
      "mfma",      "global_load",   "global_store", "global_atomic",  "lds_load",      "lds_store",
      "lds_other", "buffer_memory", "flat_memory",  "scratch_memory", "scalar_memory", "wait_barrier",
      "branch",    "valu",          "salu",         "other"};
  static const std::vector<std::string> ptx = {"mma",       "ld_global", "st_global", "ld_shared",
                                               "st_shared", "cp_async",  "ldmatrix",  "barrier",
                                               "fma",       "cvt",       "branch",    "other"};
  static const std::vector<std::string> sass = {
      "mma",      "tma",     "ldmatrix", "ld_global", "st_global", "ld_shared", "st_shared",
      "cp_async", "barrier", "fma",      "cvt",       "branch",    "other"};
  switch (isa) {
    case Isa::kAmdgcn:
      return amdgcn;
    case Isa::kPtx:
      return ptx;
    case Isa::kSass:
      break;
  }
  return sass;
}

std::string amdgcn_category(std::string_view m) {
  if (starts(m, "v_mfma") || starts(m, "v_smfmac") || starts(m, "v_wmma") || starts(m, "v_swmmac"))
    return "mfma";
  if (starts(m, "global_load")) return "global_load";
  if (starts(m, "global_store")) return "global_store";
  if (starts(m, "global_atomic")) return "global_atomic";
  if (starts(m, "ds_read") || starts(m, "ds_load")) return "lds_load";
  if (starts(m, "ds_write") || starts(m, "ds_store")) return "lds_store";
  if (starts(m, "ds_")) return "lds_other";
  if (starts(m, "buffer_")) return "buffer_memory";
  if (starts(m, "flat_")) return "flat_memory";
  if (starts(m, "scratch_")) return "scratch_memory";
  if (starts(m, "s_load") || starts(m, "s_buffer_load") || starts(m, "s_store") ||
      starts(m, "s_buffer_store") || starts(m, "s_scratch_") || starts(m, "s_dcache_") ||
      starts(m, "s_atomic") || starts(m, "s_buffer_atomic"))
    return "scalar_memory";
  if (starts(m, "s_waitcnt") || starts(m, "s_wait_") || starts(m, "s_barrier")) return "wait_barrier";
  if (starts(m, "s_branch") || starts(m, "s_cbranch") || starts(m, "s_setpc") || starts(m, "s_swappc") ||
      starts(m, "s_call") || m == "s_endpgm")
    return "branch";
  if (starts(m, "v_")) return "valu";
  if (starts(m, "s_")) return "salu";
  return "other";
}

std::string ptx_category(std::string_view opcode) {
  const auto parts = dotted(opcode);
  const std::string_view head = parts[0];
  const std::string_view second = parts.size() > 1 ? parts[1] : std::string_view{};
  if (head == "mma" || (head == "wmma" && second == "mma") || (head == "wgmma" && starts(second, "mma")) ||
      (head == "tcgen05" && second == "mma"))
    return "mma";
  if (head == "ld" || head == "ldu") {
    const auto space = state_space(parts);
    return space == "global" ? "ld_global" : space == "shared" ? "ld_shared" : "other";
  }
  if (head == "st") {
    const auto space = state_space(parts);
    return space == "global" ? "st_global" : space == "shared" ? "st_shared" : "other";
  }
  if (head == "cp" && second == "async") return "cp_async";
  if (head == "ldmatrix") return "ldmatrix";
  if (head == "bar" || head == "barrier") return "barrier";
  if (head == "fma") return "fma";
  if (head == "cvt") return "cvt";
  if (head == "bra" || head == "brx" || head == "call" || head == "ret" || head == "exit") return "branch";
  return "other";
}

std::string sass_category(std::string_view opcode) {
  const std::string_view head = opcode.substr(0, opcode.find('.'));
  const auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), head) != names.end();
  };
  // HMMA, HGMMA, IMMA, DMMA, QGMMA, UTCHMMA ...: every tensor-core opcode ends so.
  if (head.size() >= 3 && head.substr(head.size() - 3) == "MMA") return "mma";
  if (starts(head, "UTMA") || starts(head, "UBLK")) return "tma";
  if (head == "LDSM") return "ldmatrix";
  if (head == "LDG") return "ld_global";
  if (head == "STG") return "st_global";
  if (head == "LDS") return "ld_shared";
  if (head == "STS") return "st_shared";
  if (is({"LDGSTS", "LDGDEPBAR"})) return "cp_async";
  if (is({"BAR", "SYNCS", "DEPBAR", "MEMBAR", "WARPSYNC", "WARPGROUP", "ARRIVES"})) return "barrier";
  if (is({"FFMA", "FFMA2", "HFMA2", "DFMA"})) return "fma";
  if (is({"F2F", "F2FP", "F2I", "I2F", "I2FP", "F2IP"})) return "cvt";
  if (is({"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK"})) return "branch";
  return "other";
}

namespace {

std::string category_of(Isa isa, std::string_view mnemonic) {
  switch (isa) {
    case Isa::kAmdgcn:
      return amdgcn_category(mnemonic);
    case Isa::kPtx:
      return ptx_category(mnemonic);
    case Isa::kSass:
      break;
  }
  return sass_category(mnemonic);
}

}  // namespace

InstructionMix tally_mix(Isa isa, const std::vector<std::string>& mnemonics, std::size_t top_n) {
  std::map<std::string, std::int64_t> by_category, by_mnemonic;
  for (const auto& m : mnemonics) {
    ++by_category[category_of(isa, m)];
    ++by_mnemonic[m];
  }
  InstructionMix mix;
  mix.total = static_cast<std::int64_t>(mnemonics.size());
  for (const auto& c : mix_categories(isa)) mix.categories.emplace_back(c, by_category[c]);
  mix.top_mnemonics.assign(by_mnemonic.begin(), by_mnemonic.end());
  std::stable_sort(mix.top_mnemonics.begin(), mix.top_mnemonics.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (mix.top_mnemonics.size() > top_n) mix.top_mnemonics.resize(top_n);
  return mix;
}

}  // namespace kforge
