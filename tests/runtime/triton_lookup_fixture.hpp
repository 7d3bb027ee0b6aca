// A Lookup serving the Triton corpus's rmsnorm_row (one configuration, set
// as the rmsnorm override) on a given device: what the Triton kind's,
// cache's and interpreter's tests launch through.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>

#include "runtime/catalog/template_catalog.hpp"
#include "runtime/lookup/lookup.hpp"

namespace kforge::test {

inline const std::filesystem::path kTritonCorpus =
    std::filesystem::path(KFORGE_TEST_DATA_DIR) / ".." / ".." / "templates" / "triton";

inline constexpr const char* kRmsnormRowConfig = "BLOCK_N128_ROWS2_num_warps4";

inline std::unique_ptr<Lookup> rmsnorm_row_lookup(Device& device, const LookupOptions& options) {
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  REQUIRE(catalog->add_dir((kTritonCorpus / "rmsnorm_row").string()).ok());
  auto lookup = Lookup::open(options, device, std::move(*catalog));
  REQUIRE(lookup.ok());
  REQUIRE((*lookup)->set_override("rmsnorm", "rmsnorm_triton_row", kRmsnormRowConfig).ok());
  return std::move(*lookup);
}

/// The same with no database (only the override can fire).
inline std::unique_ptr<Lookup> rmsnorm_row_lookup(Device& device) {
  LookupOptions options;
  options.user_db = "/nonexistent/kforge-triton-test.db";
  return rmsnorm_row_lookup(device, options);
}

}  // namespace kforge::test
