// JSON read from outside: nesting bounded, numbers out of range and syntax
// errors reported with where the text came from and the field.
#include "core/bounded_json.hpp"

#include <catch2/catch.hpp>

#include <string>

#include "generator/manifest.hpp"

using kforge::parse_json_bounded;
using kforge::parse_ordered_json_bounded;

namespace {

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string error_of(const std::string& text) {
  auto j = parse_json_bounded(text, "in.json");
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code == kforge::ErrorCode::kBadInput);
  CHECK(j.error().message.find('\n') == std::string::npos);
  return j.error().message;
}

}  // namespace

TEST_CASE("bounded JSON: nesting up to the bound parses, deeper is an error naming the field", "[json]") {
  CHECK(parse_json_bounded(nested(kforge::kMaxJsonDepth), "in.json").ok());
  CHECK_THAT(error_of(nested(kforge::kMaxJsonDepth + 1)),
             Catch::StartsWith("in.json: ") && Catch::Contains("nested deeper than 64 levels"));
  // 100,000 levels: the parser returns an error instead of overflowing the stack.
  CHECK_THAT(error_of(nested(100000)), Catch::Contains("nested deeper than 64"));
  CHECK_THAT(error_of("{\"a\": [1, {\"b\": " + nested(100) + "}]}"),
             Catch::StartsWith("in.json: a[1].b") && Catch::Contains("nested deeper"));
  // The field of a deep value is its first levels, not 64 of them.
  CHECK_THAT(error_of(nested(100000)), Catch::StartsWith("in.json: [0][0][0][0][0][0][0][0]...: nested"));
  CHECK_FALSE(parse_ordered_json_bounded(nested(100000), "column").ok());
  CHECK(parse_ordered_json_bounded("{\"z\": 1, \"a\": [2]}", "column")->dump() == "{\"z\":1,\"a\":[2]}");
}

TEST_CASE("bounded JSON: a number out of range names the field and stays short", "[json]") {
  const std::string huge = "1" + std::string(400, '0');
  const std::string msg = error_of("{\"parameters\": [{\"values\": [8, " + huge + "]}]}");
  CHECK_THAT(msg, Catch::StartsWith("in.json: parameters[0].values[1]: number 1000000000000000"));
  CHECK_THAT(msg, Catch::Contains("(401 characters) is out of range"));
  CHECK(msg.size() < 120);
  CHECK_THAT(msg, !Catch::Contains("out_of_range") && !Catch::Contains("json.exception"));
}

TEST_CASE("bounded JSON: syntax errors give the byte offset without nlohmann's tag", "[json]") {
  CHECK_THAT(error_of("{\"a\": 1,, }"), Catch::StartsWith("in.json: JSON syntax error at byte 9: ") &&
                                            !Catch::Contains("json.exception"));
}

TEST_CASE("bounded JSON: a manifest value 10**400 is an error naming the manifest and field", "[json][manifest]") {
  const std::string text = R"({"schema_version": 1, "name": "t", "parameters": [{"name": "BM", "values": [16, 1)" +
                           std::string(400, '0') + "]}]}";
  auto m = kforge::TemplateManifest::parse(text, "t/manifest.json");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code == kforge::ErrorCode::kBadInput);
  CHECK_THAT(m.error().message, Catch::StartsWith("t/manifest.json: parameters[0].values[1]: number "));
}

TEST_CASE("json_excerpt cuts long values for error messages", "[json]") {
  const nlohmann::json long_array(std::vector<int>(1000, 7));
  const std::string shown = kforge::json_excerpt(long_array);
  CHECK(shown.size() == 63);
  CHECK_THAT(shown, Catch::StartsWith("[7,7,7") && Catch::EndsWith("..."));
  CHECK(kforge::json_excerpt(nlohmann::json("x")) == "\"x\"");
}
