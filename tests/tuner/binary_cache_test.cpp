// The on-disk binary cache: round trip, key sensitivity, corruption detected
// and rebuilt, concurrent writers never expose half an entry.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "runtime/kinds/binary_cache.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

namespace {

BinaryCacheKey sample_key() {
  BinaryCacheKey k;
  k.template_hash = "0123456789abcdef";
  k.config = "BK8_BM32_BN32";
  k.dtype = "f32";
  k.layout = "NN";
  k.backend = "opencl";
  k.arch = "x86_64-haswell";
  k.compiler = "pocl";
  k.compiler_version = "3.1 LLVM 15.0.6";
  k.options = "-cl-std=CL1.2";
  k.source_hash = "feedfacecafebeef";
  return k;
}

CompiledKernel sample_kernel(std::size_t n = 1000) {
  CompiledKernel k;
  k.kernel_name = "gemm__BK8_BM32_BN32";
  k.options = "-cl-std=CL1.2";
  k.log = "warning: something harmless";
  k.compile_ms = 1234.5;
  k.resources.local_mem_bytes = 2048;
  k.resources.max_block_threads = 256;
  for (std::size_t i = 0; i < n; ++i) k.binary.push_back(static_cast<std::uint8_t>(i * 7 + 3));
  return k;
}

}  // namespace

TEST_CASE("binary cache: put then get returns the same kernel", "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("cache"));
  REQUIRE(cache.ok());
  const auto key = sample_key();
  CHECK_FALSE(cache->get(key).has_value());
  REQUIRE(cache->put(key, sample_kernel()).ok());
  auto got = cache->get(key);
  REQUIRE(got.has_value());
  const auto want = sample_kernel();
  CHECK(got->binary == want.binary);
  CHECK(got->kernel_name == want.kernel_name);
  CHECK(got->options == want.options);
  CHECK(got->log == want.log);
  CHECK(got->compile_ms == want.compile_ms);
  CHECK(got->resources.local_mem_bytes == 2048);
  CHECK(got->resources.max_block_threads == 256);
  CHECK(got->resources.registers == -1);
  const auto s = cache->stats();
  CHECK(s.hits == 1);
  CHECK(s.misses == 1);
  CHECK(s.writes == 1);
  CHECK(s.corrupt == 0);
}

TEST_CASE("binary cache: every key field selects a different entry", "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("c"));
  REQUIRE(cache.ok());
  REQUIRE(cache->put(sample_key(), sample_kernel()).ok());
  std::vector<std::string BinaryCacheKey::*> fields = {
      &BinaryCacheKey::template_hash, &BinaryCacheKey::config,   &BinaryCacheKey::dtype,
      &BinaryCacheKey::layout,        &BinaryCacheKey::variant,  &BinaryCacheKey::backend,
      &BinaryCacheKey::arch,          &BinaryCacheKey::compiler, &BinaryCacheKey::compiler_version,
      &BinaryCacheKey::options,       &BinaryCacheKey::source_hash};
  for (auto f : fields) {
    auto k = sample_key();
    k.*f += "x";
    INFO(k.text());
    CHECK(k.digest() != sample_key().digest());
    CHECK_FALSE(cache->get(k).has_value());
  }
  CHECK(cache->get(sample_key()).has_value());
}

TEST_CASE("binary cache: a corrupt entry is a miss, removed, and rebuilt by get_or_compile",
          "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("c"));
  REQUIRE(cache.ok());
  const auto key = sample_key();
  REQUIRE(cache->put(key, sample_kernel()).ok());
  const std::string path = cache->entry_path(key);
  REQUIRE(std::filesystem::exists(path));
  std::string bytes = test::read_file(path);

  SECTION("one flipped payload byte") { bytes[bytes.size() / 2] ^= 0x40; }
  SECTION("truncated") { bytes.resize(bytes.size() - 5); }
  SECTION("empty file") { bytes.clear(); }
  SECTION("trailing garbage") { bytes += "xyz"; }
  SECTION("another format version") { bytes[4] = 99; }
  test::write_file(path, bytes);

  CHECK_FALSE(cache->get(key).has_value());
  CHECK(cache->stats().corrupt == 1);
  CHECK_FALSE(std::filesystem::exists(path));

  int compiles = 0;
  bool hit = true;
  auto k = cache->get_or_compile(key, [&]() -> Result<CompiledKernel> {
    ++compiles;
    return sample_kernel();
  }, &hit);
  REQUIRE(k.ok());
  CHECK_FALSE(hit);
  CHECK(compiles == 1);
  CHECK(k->binary == sample_kernel().binary);
  // Rebuilt: the next lookup hits without compiling.
  auto again = cache->get_or_compile(key, [&]() -> Result<CompiledKernel> {
    ++compiles;
    return sample_kernel();
  }, &hit);
  REQUIRE(again.ok());
  CHECK(hit);
  CHECK(compiles == 1);
}

TEST_CASE("binary cache: an entry written under another key's name is not returned",
          "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("c"));
  REQUIRE(cache.ok());
  auto other = sample_key();
  other.config = "BK16_BM64_BN64";
  REQUIRE(cache->put(other, sample_kernel()).ok());
  // Simulate a digest collision: the other key's entry at this key's path.
  std::filesystem::create_directories(std::filesystem::path(cache->entry_path(sample_key())).parent_path());
  std::filesystem::copy_file(cache->entry_path(other), cache->entry_path(sample_key()));
  CHECK_FALSE(cache->get(sample_key()).has_value());
  CHECK(cache->get(other).has_value());
}

TEST_CASE("binary cache: a failed compile is returned and not cached", "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("c"));
  REQUIRE(cache.ok());
  auto r = cache->get_or_compile(sample_key(), []() -> Result<CompiledKernel> {
    return Error{ErrorCode::kCompile, "error: expected ';'", "log"};
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::kCompile);
  CHECK(cache->stats().writes == 0);
  CHECK_FALSE(std::filesystem::exists(cache->entry_path(sample_key())));
}

TEST_CASE("binary cache: a deferred binary is fetched only where the policy stores it", "[binary_cache][unit]") {
  test::TempDir dir;
  auto cache = BinaryCache::open(dir.file("c"));
  REQUIRE(cache.ok());
  int fetched = 0;
  auto deferred = [&]() -> Result<CompiledKernel> {
    CompiledKernel k = sample_kernel();
    const std::vector<std::uint8_t> bytes = k.binary;
    k.binary.clear();
    k.fetch_binary = [&fetched, bytes]() -> Result<std::vector<std::uint8_t>> {
      ++fetched;
      return bytes;
    };
    return k;
  };
  bool hit = true;
  REQUIRE(cache->get_or_compile(sample_key(), deferred, &hit, BinaryCache::Store::kWhenFree).ok());
  CHECK_FALSE(hit);
  CHECK(fetched == 0);
  CHECK_FALSE(std::filesystem::exists(cache->entry_path(sample_key())));

  REQUIRE(cache->get_or_compile(sample_key(), deferred, &hit, BinaryCache::Store::kAlways).ok());
  CHECK(fetched == 1);
  auto got = cache->get(sample_key());
  REQUIRE(got.has_value());
  CHECK(got->binary == sample_kernel().binary);

  // A binary that came with the compile is stored under either policy.
  BinaryCacheKey other = sample_key();
  other.config = "BK16_BM32_BN32";
  REQUIRE(cache->get_or_compile(other, [] { return Result<CompiledKernel>(sample_kernel()); }, nullptr,
                                BinaryCache::Store::kWhenFree).ok());
  CHECK(cache->get(other).has_value());
}

TEST_CASE("binary cache: concurrent writer processes leave one whole entry", "[binary_cache][unit]") {
  test::TempDir dir;
  const std::string cdir = dir.file("c");
  REQUIRE(BinaryCache::open(cdir).ok());
  constexpr int kWriters = 4;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto c = BinaryCache::open(cdir);
      int bad = 0;
      for (int i = 0; i < 40; ++i) {
        if (!c->put(sample_key(), sample_kernel(200000 + static_cast<std::size_t>(w))).ok()) ++bad;
        auto got = c->get(sample_key());
        // A reader sees a whole entry from one of the writers, never a torn one.
        if (!got || got->binary.size() < 200000 || got->binary.size() >= 200000 + kWriters) ++bad;
      }
      _exit(bad == 0 ? 0 : 1);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto c = BinaryCache::open(cdir);
  auto got = c->get(sample_key());
  REQUIRE(got.has_value());
  CHECK(c->stats().corrupt == 0);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cdir)) files += e.is_regular_file();
  CHECK(files == 1);
}

TEST_CASE("binary cache: an unusable directory is a one-line bad-input error", "[binary_cache][unit]") {
  test::TempDir dir;
  test::write_file(dir.file("file"), "x");
  auto c = BinaryCache::open(dir.file("file") + "/sub");
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code == ErrorCode::kBadInput);
  CHECK_THAT(c.error().message, Catch::Contains(dir.file("file")));
}
