// Manifest expressions (constraints, grids, envelopes): parsed, then
// evaluated with every name they read bound to values taken from the input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "generator/expr.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto e = kforge::Expr::parse(text);
  if (!e.ok()) return 0;
  kforge::Env env;
  std::uint64_t v = size * 0x9E3779B97F4A7C15ull;
  for (const std::string& name : e->names()) {
    // Values of every size and sign; small ones half the time, where
    // constraints are decided.
    const auto value = static_cast<std::int64_t>(v);
    env[name] = (v & 1) ? value : value % 4096;
    v = v * 6364136223846793005ull + 1442695040888963407ull;
  }
  (void)e->eval(env);
  env.clear();
  (void)e->eval(env);  // every name missing
  return 0;
}
