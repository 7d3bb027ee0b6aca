// Canonical configuration names.
#include "generator/config.hpp"

#include <catch2/catch.hpp>

using kforge::Config;

TEST_CASE("config: canonical name sorts parameters", "[config]") {
  Config c;
  c.values = {{"TN", 4}, {"BM", 64}, {"BK", 16}, {"TM", 4}, {"BN", 64}};
  CHECK(c.canonical_name() == "BK16_BM64_BN64_TM4_TN4");
}

TEST_CASE("config: parse is the inverse of canonical_name", "[config]") {
  for (const char* name :
       {"BK16_BM64_BN64_TM4_TN4", "B0", "A1_B2", "VEC4_WG256", "X0_Y9223372036854775807"}) {
    auto c = Config::parse(name);
    REQUIRE(c.ok());
    CHECK(c->canonical_name() == name);
  }
  Config c;
  c.values = {{"BM", 128}, {"SPLITK", 1}, {"A2B", 0}};
  auto back = Config::parse(c.canonical_name());
  REQUIRE(back.ok());
  CHECK(*back == c);
}

TEST_CASE("config: invalid names are rejected with the bad token", "[config]") {
  struct Case {
    const char* text;
    const char* token;
  };
  for (auto [text, token] :
       {Case{"", ""}, Case{"BM", "BM"}, Case{"bm", "bm"}, Case{"block__x16", "block_"}, Case{"BM64__BN64", ""}, Case{"BM64_", ""},
        Case{"64", "64"}, Case{"BM64_BN-1", "BN-1"}, Case{"BM064", "BM064"}, Case{"BM64_BM32", "BM32"},
        Case{"BM64x", "BM64x"}, Case{"BM99999999999999999999", "BM99999999999999999999"}}) {
    auto c = Config::parse(text);
    INFO(text);
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().code == kforge::ErrorCode::kBadInput);
    if (*text) {
      CHECK_THAT(c.error().message, Catch::Contains(std::string("'") + text + "'"));
      CHECK_THAT(c.error().message, Catch::Contains(std::string("'") + token + "'"));
    }
  }
  auto unsorted = Config::parse("BN64_BM64");
  REQUIRE_FALSE(unsorted.ok());
  CHECK_THAT(unsorted.error().message, Catch::Contains("BM64_BN64"));
}

TEST_CASE("config: parameter names", "[config]") {
  using kforge::is_valid_parameter_name;
  CHECK(is_valid_parameter_name("BM"));
  CHECK(is_valid_parameter_name("B"));
  CHECK(is_valid_parameter_name("A2B"));
  CHECK(is_valid_parameter_name("SPLITK"));
  CHECK_FALSE(is_valid_parameter_name(""));
  CHECK_FALSE(is_valid_parameter_name("B2"));
  CHECK(is_valid_parameter_name("bm"));
  CHECK(is_valid_parameter_name("B_M"));
  CHECK(is_valid_parameter_name("Bm"));
  CHECK(is_valid_parameter_name("block_size_x"));
  CHECK(is_valid_parameter_name("x2y"));
  CHECK_FALSE(is_valid_parameter_name("2B"));
  CHECK_FALSE(is_valid_parameter_name("tile2_x"));  // "tile2_x4" would read as tile=2, x=4
  CHECK_FALSE(is_valid_parameter_name("_b"));
  CHECK_FALSE(is_valid_parameter_name("b_"));
  CHECK_FALSE(is_valid_parameter_name("b__m"));
  CHECK_FALSE(is_valid_parameter_name("b-m"));
}

TEST_CASE("config: lower-case names with '_' round-trip through the canonical name", "[config]") {
  Config c;
  c.values = {{"block_size_x", 16}, {"block_size_y", 8}, {"tile_size_x", 2}, {"use_padding", 0}, {"BM", 64}};
  CHECK(c.canonical_name() == "BM64_block_size_x16_block_size_y8_tile_size_x2_use_padding0");
  auto back = Config::parse(c.canonical_name());
  INFO((back.ok() ? "" : back.error().message));
  REQUIRE(back.ok());
  CHECK(*back == c);
}
