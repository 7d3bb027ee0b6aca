// Canonical configuration names.
#include "config.hpp"

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
       {Case{"", ""}, Case{"BM", "BM"}, Case{"bm64", "bm64"}, Case{"BM64__BN64", ""}, Case{"BM64_", ""},
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
  CHECK_FALSE(is_valid_parameter_name("bm"));
  CHECK_FALSE(is_valid_parameter_name("2B"));
  CHECK_FALSE(is_valid_parameter_name("B_M"));
  CHECK_FALSE(is_valid_parameter_name("Bm"));
}
