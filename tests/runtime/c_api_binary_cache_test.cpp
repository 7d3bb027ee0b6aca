// The C API's binary cache options: kforge_options.binary_cache_dir names
// where compiled kernels are stored (and found again by the next open);
// no_binary_cache keeps them off the disk.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "bindings/c/kforge.h"
#include "tests/test_util.hpp"

namespace {

/// The entry files under `dir`.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); ++it) {
    if (it->is_regular_file() && it->path().extension() == ".bin") out.push_back(it->path().string());
  }
  return out;
}

ino_t inode(const std::string& path) {
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  return st.st_ino;
}

/// Opens a lookup with no database, selects gemm 48x40x32 (the default
/// rule) and prepares its kernel.
void open_and_prepare(const char* cache_dir, int no_cache) {
  kforge_options o;
  kforge_options_init(&o);
  o.binary_cache_dir = cache_dir;
  o.no_binary_cache = no_cache;
  o.env_overrides = 0;
  kforge_lookup* lookup = nullptr;
  kforge_status s = kforge_open(&o, &lookup);
  INFO(kforge_last_error());
  REQUIRE(s == KFORGE_OK);
  const kforge_dim dims[] = {{"M", 48}, {"N", 40}, {"K", 32}};
  const kforge_problem p = {"gemm", dims, 3, nullptr, nullptr};
  const kforge_selection* sel = nullptr;
  s = kforge_select(lookup, &p, &sel);
  INFO(kforge_last_error());
  REQUIRE(s == KFORGE_OK);
  s = kforge_prepare(lookup, sel);
  INFO(kforge_last_error());
  CHECK(s == KFORGE_OK);
  kforge_close(lookup);
}

}  // namespace

TEST_CASE("the C API stores kernels in the binary cache it is given, or in none", "[c_api][opencl]") {
  kforge::test::TempDir dir;
  const std::string cache = dir.file("binaries");
  open_and_prepare(cache.c_str(), 0);
  const auto stored = entries(cache);
  REQUIRE(stored.size() == 1);
  const ino_t first = inode(stored[0]);
  // Found again: a hit reads the entry; a miss would rename a new file over it.
  open_and_prepare(cache.c_str(), 0);
  CHECK(entries(cache) == stored);
  CHECK(inode(stored[0]) == first);
  const std::string unused = dir.file("unused");
  open_and_prepare(unused.c_str(), 1);
  CHECK_FALSE(std::filesystem::exists(unused));
}
