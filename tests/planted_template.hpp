// The planted test template (tests/data/templates/gemm_naive_planted) and
// renamed, manifest-edited copies of it, for tests that need a template
// with one property changed (a guard, an envelope, a new hash).
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/test_util.hpp"

namespace kforge::test {

inline const std::string kPlanted = std::string(KFORGE_TEST_DATA_DIR) + "/templates/gemm_naive_planted";

/// A copy of the planted template under `dir`/`name`, renamed, with its
/// manifest edited by `edit` (a JSON text substitution: from -> to).
inline std::string planted_variant(const TempDir& dir, const std::string& name,
                                   const std::string& from, const std::string& to) {
  const auto out = dir.path() / name;
  std::filesystem::create_directories(out);
  std::filesystem::copy(kPlanted, out, std::filesystem::copy_options::recursive);
  const std::string manifest_path = (out / "manifest.json").string();
  std::string m = read_file(manifest_path);
  m.replace(m.find("\"name\": \"gemm_naive_planted\""), 28, "\"name\": \"" + name + "\"");
  if (!from.empty()) {
    const auto at = m.find(from);
    REQUIRE(at != std::string::npos);
    m.replace(at, from.size(), to);
  }
  write_file(manifest_path, m);
  return out.string();
}

}  // namespace kforge::test
