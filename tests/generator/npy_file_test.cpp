// The .npy reader and writer: round trips, and files it must refuse.
#include "generator/npy_file.hpp"

#include <catch2/catch.hpp>
#include <fstream>

#include "tests/test_util.hpp"

using namespace kforge;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A version-1 file with `header` (padded) and `data`.
std::string npy_bytes(std::string header, const std::string& data) {
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

}  // namespace

TEST_CASE("npy: f8 and f4 arrays round trip", "[npy]") {
  test::TempDir dir;
  const std::vector<double> v = {1.5, -2.25, 0.0, 1e-3};
  REQUIRE(write_npy(dir.file("a.npy"), v, "<f8").ok());
  auto a = read_npy(dir.file("a.npy"));
  REQUIRE(a.ok());
  CHECK(a->descr == "<f8");
  CHECK(a->shape == std::vector<std::uint64_t>{4});
  CHECK(a->values == v);
  REQUIRE(write_npy(dir.file("b.npy"), v, "<f4").ok());
  auto b = read_npy(dir.file("b.npy"));
  REQUIRE(b.ok());
  CHECK(b->values[1] == -2.25);
  CHECK(b->values[3] == static_cast<double>(1e-3f));
}

TEST_CASE("npy: a 2-D shape and f2 values", "[npy]") {
  test::TempDir dir;
  const std::string data("\x00\x3c\x00\xc0\x00\x00\x00\x38\x00\x3c\x00\x3c", 12);  // 1, -2, 0, 0.5, 1, 1
  write_bytes(dir.file("h.npy"),
              npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", data));
  auto a = read_npy(dir.file("h.npy"));
  REQUIRE(a.ok());
  CHECK(a->shape_text() == "(2, 3)");
  CHECK(a->values == std::vector<double>{1, -2, 0, 0.5, 1, 1});
}

TEST_CASE("npy: bad files are refused naming the file and what is wrong", "[npy]") {
  test::TempDir dir;
  const std::string path = dir.file("bad.npy");
  auto fails_with = [&](const std::string& bytes, const std::string& what) {
    write_bytes(path, bytes);
    auto a = read_npy(path);
    REQUIRE_FALSE(a.ok());
    INFO(a.error().message);
    CHECK(a.error().message.find(path) != std::string::npos);
    CHECK(a.error().message.find(what) != std::string::npos);
  };
  fails_with("not numpy at all", "magic");
  fails_with(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
             "dtype '<c8'");
  fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", std::string(4, '\0')),
             "fortran_order");
  fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", std::string(8, '\0')),
             "shape (3,) needs 3");
  CHECK_FALSE(read_npy(dir.file("missing.npy")).ok());
}
