// The validation reference file restarted workers read: a round trip keeps
// every bit, and a file that is missing, truncated, corrupt or another
// problem's is refused with an error naming the file.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/test_util.hpp"
#include "tuner/measure/reference_file.hpp"

namespace kforge {

namespace {

Problem gemm(std::int64_t n) {
  Problem p;
  p.op = "gemm";
  p.dims = {{"M", n}, {"N", n}, {"K", n}, {"batch", 1}};
  return p;
}

Reference sample_reference() {
  Reference r;
  r.tolerance = 3.5;
  for (int i = 0; i < 1000; ++i) {
    r.value.push_back(std::sin(i) * 1e3);
    r.scale.push_back(std::fabs(std::cos(i)) + 1e-300);
  }
  r.value[7] = -0.0;
  return r;
}

void flip_byte(const std::string& path, std::uintmax_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x10));
}

}  // namespace

TEST_CASE("reference file: a round trip keeps every bit", "[reference_file]") {
  test::TempDir tmp;
  const std::string path = tmp.file("poisoned-output.ref");
  const auto key = reference_key(gemm(64), 7, WorkloadKind::kPoisonedOutput);
  const Reference r = sample_reference();
  REQUIRE(save_reference(path, key, r).ok());
  auto back = load_reference(path, key);
  REQUIRE(back.ok());
  CHECK(back->tolerance == r.tolerance);
  REQUIRE(back->value.size() == r.value.size());
  CHECK(std::memcmp(back->value.data(), r.value.data(), r.value.size() * 8) == 0);
  CHECK(std::memcmp(back->scale.data(), r.scale.data(), r.scale.size() * 8) == 0);
  // Nothing is left beside it.
  CHECK(std::distance(std::filesystem::directory_iterator(tmp.path()), {}) == 1);
}

TEST_CASE("reference file: the key tells problems, seeds and validation runs apart", "[reference_file]") {
  const auto key = reference_key(gemm(64), 7, WorkloadKind::kPoisonedOutput);
  CHECK(key != reference_key(gemm(65), 7, WorkloadKind::kPoisonedOutput));
  CHECK(key != reference_key(gemm(64), 8, WorkloadKind::kPoisonedOutput));
  CHECK(key != reference_key(gemm(64), 7, WorkloadKind::kAccumulate));
  Problem bf16 = gemm(64);
  bf16.dtype = Dtype::kBF16;
  CHECK(key != reference_key(bf16, 7, WorkloadKind::kPoisonedOutput));

  test::TempDir tmp;
  const std::string path = tmp.file("accumulate.ref");
  REQUIRE(save_reference(path, key, sample_reference()).ok());
  auto other = load_reference(path, reference_key(gemm(64), 7, WorkloadKind::kAccumulate));
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().code == ErrorCode::kBadInput);
  CHECK_THAT(other.error().message, Catch::Contains(path) && Catch::Contains("another problem"));
}

TEST_CASE("reference file: missing, truncated and corrupt files are refused", "[reference_file]") {
  test::TempDir tmp;
  const std::string path = tmp.file("r.ref");
  const auto key = reference_key(gemm(64), 7, WorkloadKind::kPoisonedOutput);

  auto missing = load_reference(path, key);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == ErrorCode::kNotFound);

  REQUIRE(save_reference(path, key, sample_reference()).ok());
  const auto size = std::filesystem::file_size(path);
  // Why the file as it is now is refused.
  auto refusal = [&] {
    auto r = load_reference(path, key);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };

  SECTION("a flipped bit in the values") {
    flip_byte(path, 32 + 8 * 500);
    CHECK_THAT(refusal(), Catch::Contains(path) && Catch::Contains("checksum"));
  }
  SECTION("a flipped bit in the tolerance") {
    flip_byte(path, 24 + 3);
    CHECK_THAT(refusal(), Catch::Contains("checksum"));
  }
  SECTION("cut short") {
    std::filesystem::resize_file(path, size - 8);
    CHECK_THAT(refusal(), Catch::Contains(path) && Catch::Contains("expected"));
  }
  SECTION("a count that promises more than the file holds") {
    flip_byte(path, 16 + 5);
    CHECK_THAT(refusal(), Catch::Contains("expected"));
  }
  SECTION("not a reference file") {
    std::ofstream(path, std::ios::trunc) << "a binary cache entry, or anything else, of some length";
    CHECK_THAT(refusal(), Catch::Contains("not a kforge reference file"));
  }
}

TEST_CASE("reference file: a file that cannot be written leaves nothing behind", "[reference_file]") {
  test::TempDir tmp;
  const std::string path = (tmp.path() / "no-such-dir" / "r.ref").string();
  auto s = save_reference(path, 1, sample_reference());
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error().message, Catch::Contains("no-such-dir"));
  Reference bad = sample_reference();
  bad.scale.pop_back();
  CHECK_FALSE(save_reference(tmp.file("r.ref"), 1, bad).ok());
  CHECK(std::filesystem::is_empty(tmp.path()));
}

}  // namespace kforge
