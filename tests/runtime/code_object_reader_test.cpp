// The AMDGPU code-object reader on a real code object (clang-22's gfx942
// one, also a fuzz seed) and on damaged copies of it: each damage is an
// error, never the end of the process or gigabytes of memory.
#include "runtime/binaries/code_object_reader.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "tests/test_util.hpp"

namespace {

using kforge::ErrorCode;

std::string seed() {
  return kforge::test::read_file(KFORGE_SOURCE_DIR "/tests/fuzz/seeds/code_object/scale_gfx942.co");
}

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

template <typename T>
T read_at(const std::string& s, std::size_t at) {
  T v{};
  std::memcpy(&v, s.data() + at, sizeof v);
  return v;
}

/// Offset of the section header of the first section of ELF type `type`.
std::size_t section_header(const std::string& elf, std::uint32_t type) {
  const auto shoff = read_at<std::uint64_t>(elf, 0x28);
  const auto count = read_at<std::uint16_t>(elf, 0x3c);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = shoff + i * 64;
    if (read_at<std::uint32_t>(elf, at + 4) == type) return at;
  }
  FAIL("no section of type " << type);
  return 0;
}

/// The seed with its metadata note's msgpack starting with `prefix`.
std::string with_metadata_prefix(const std::string& prefix) {
  std::string elf = seed();
  const auto note = read_at<std::uint64_t>(elf, section_header(elf, 7) + 0x18);  // SHT_NOTE, sh_offset
  const auto name_bytes = read_at<std::uint32_t>(elf, note);
  const std::size_t desc = note + 12 + ((name_bytes + 3) & ~std::size_t{3});
  elf.replace(desc, prefix.size(), prefix);
  return elf;
}

}  // namespace

TEST_CASE("code object reader: the seed's metadata and symbols", "[code_object]") {
  if (!kforge::code_object_reader_available()) return;  // built without LLVM 15
  const std::string elf = seed();
  auto co = kforge::read_amd_code_object(bytes(elf));
  REQUIRE(co.ok());
  CHECK(co->target == "amdgcn-amd-amdhsa--gfx942");
  REQUIRE(co->find("scale"));
  CHECK(co->find("scale")->lds_bytes == 512);
  auto summary = kforge::read_elf_summary(bytes(elf));
  REQUIRE(summary.ok());
  CHECK(summary->machine == 224);
  bool scale_in_text = false;
  for (const auto& s : summary->symbols) scale_in_text = scale_in_text || (s.name == "scale" && s.section == ".text");
  CHECK(scale_in_text);
}

TEST_CASE("code object reader: a symbol table with a wrong entry size is an error", "[code_object]") {
  if (!kforge::code_object_reader_available()) return;  // built without LLVM 15
  std::string elf = seed();
  const std::uint64_t entsize = 34359738392;  // what the fuzzer wrote
  std::memcpy(elf.data() + section_header(elf, 2) + 0x38, &entsize, sizeof entsize);  // SHT_SYMTAB, sh_entsize
  auto summary = kforge::read_elf_summary(bytes(elf));
  REQUIRE_FALSE(summary.ok());
  CHECK(summary.error().code == ErrorCode::kBadInput);
}

TEST_CASE("code object reader: metadata declaring 2^32 elements is an error", "[code_object]") {
  if (!kforge::code_object_reader_available()) return;  // built without LLVM 15
  auto co = kforge::read_amd_code_object(bytes(with_metadata_prefix("\xdd\xff\xff\xff\xff")));  // array32
  REQUIRE_FALSE(co.ok());
  CHECK(co.error().code == ErrorCode::kBadInput);
}

TEST_CASE("code object reader: metadata whose map keys are arrays is an error", "[code_object]") {
  if (!kforge::code_object_reader_available()) return;  // built without LLVM 15
  // {[nil]: nil, [nil]: nil}
  auto co = kforge::read_amd_code_object(bytes(with_metadata_prefix(std::string("\x82\x91\xc0\xc0\x91\xc0\xc0", 7))));
  REQUIRE_FALSE(co.ok());
  CHECK(co.error().code == ErrorCode::kBadInput);
}
