// Manifest expressions: grammar, C integer semantics, functions and error positions.
#include "generator/expr.hpp"

#include <catch2/catch.hpp>
#include <limits>

using kforge::Env;
using kforge::Expr;

namespace {

std::int64_t eval(const std::string& text, const Env& env = {}) {
  auto e = Expr::parse(text);
  if (!e) FAIL("parse of '" << text << "': " << e.error().message);
  auto v = e->eval(env);
  if (!v) FAIL("eval of '" << text << "': " << v.error().message);
  return *v;
}

std::string parse_error(const std::string& text) {
  auto e = Expr::parse(text);
  if (e) FAIL("'" << text << "' parsed but should not");
  CHECK(e.error().code == kforge::ErrorCode::kBadInput);
  return e.error().message;
}

std::string eval_error(const std::string& text, const Env& env = {}) {
  auto e = Expr::parse(text);
  if (!e) FAIL("parse of '" << text << "': " << e.error().message);
  auto v = e->eval(env);
  if (v) FAIL("'" << text << "' evaluated to " << *v << " but should fail");
  CHECK(v.error().code == kforge::ErrorCode::kBadInput);
  return v.error().message;
}

}  // namespace

TEST_CASE("expr: precedence follows C", "[expr]") {
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("(1 + 2) * 3") == 9);
  CHECK(eval("2 + 3 % 2") == 3);
  CHECK(eval("1 + 2 < 4") == 1);
  CHECK(eval("1 < 2 && 3 < 2") == 0);
  CHECK(eval("1 || 0 && 0") == 1);  // && binds tighter than ||
  CHECK(eval("(1 || 0) && 0") == 0);
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("!0 + 1") == 2);  // unary binds tighter than +
  CHECK(eval("- -3") == 3);
  CHECK(eval("!!7") == 1);
}

TEST_CASE("expr: binary operators are left associative", "[expr]") {
  CHECK(eval("10 - 4 - 3") == 3);
  CHECK(eval("64 / 4 / 2") == 8);
  CHECK(eval("100 % 7 % 3") == 2);
  CHECK(eval("2 * 3 / 4") == 1);
  CHECK(eval("2 / 4 * 3") == 0);
}

TEST_CASE("expr: division and modulo truncate toward zero as in C", "[expr]") {
  CHECK(eval("7 / 2") == 3);
  CHECK(eval("-7 / 2") == -3);
  CHECK(eval("7 / -2") == -3);
  CHECK(eval("-7 % 2") == -1);
  CHECK(eval("7 % -2") == 1);
  CHECK(eval("-7 % -2") == -1);
}

TEST_CASE("expr: min, max and ceil_div", "[expr]") {
  CHECK(eval("min(3, 1, 2)") == 1);
  CHECK(eval("max(3, 1, 2)") == 3);
  CHECK(eval("min(4, 9)") == 4);
  CHECK(eval("max(-4, -9)") == -4);
  CHECK(eval("ceil_div(256, 64)") == 4);
  CHECK(eval("ceil_div(257, 64)") == 5);
  CHECK(eval("ceil_div(1, 64)") == 1);
  CHECK(eval("ceil_div(0, 64)") == 0);
  CHECK(eval("ceil_div(-7, 2)") == -3);  // exact ceiling for any signs
  CHECK(eval("ceil_div(7, -2)") == -3);
  CHECK(eval("ceil_div(-7, -2)") == 4);
  CHECK(eval("max(min(8, 16), 2) * ceil_div(10, 3)") == 32);
}

TEST_CASE("expr: comparisons and logic yield 0 or 1", "[expr]") {
  CHECK(eval("3 == 3") == 1);
  CHECK(eval("3 != 3") == 0);
  CHECK(eval("2 < 3") == 1);
  CHECK(eval("3 <= 3") == 1);
  CHECK(eval("4 > 3") == 1);
  CHECK(eval("3 >= 4") == 0);
  CHECK(eval("5 && 7") == 1);
  CHECK(eval("0 || 9") == 1);
  CHECK(eval("!5") == 0);
}

TEST_CASE("expr: && and || short-circuit", "[expr]") {
  CHECK(eval("0 && 1 / 0") == 0);
  CHECK(eval("1 || 1 / 0") == 1);
  CHECK(eval("BK == 0 || K % BK == 0", {{"BK", 0}, {"K", 5}}) == 1);
}

TEST_CASE("expr: names come from the environment", "[expr]") {
  Env env{{"BM", 64}, {"TM", 4}, {"M", 1000}};
  CHECK(eval("BM / TM", env) == 16);
  CHECK(eval("ceil_div(M, BM)", env) == 16);
  auto e = Expr::parse("max(BM, TM) + BM * ceil_div(M, x_1)");
  REQUIRE(e.ok());
  CHECK(e->names() == std::vector<std::string>{"BM", "M", "TM", "x_1"});
  CHECK(e->position_of("BM") == 4);
  CHECK(e->position_of("M") == 28);
  CHECK(e->text() == "max(BM, TM) + BM * ceil_div(M, x_1)");
}

TEST_CASE("expr: parse errors give the position", "[expr]") {
  CHECK(parse_error("BM @ 2") == "position 3: unexpected character '@'");
  CHECK(parse_error("BM & TM") == "position 3: unexpected character '&'");
  CHECK(parse_error("a = b") == "position 2: unexpected character '='");
  CHECK(parse_error("") == "position 0: unexpected end of expression");
  CHECK(parse_error("1 +") == "position 3: unexpected end of expression");
  CHECK(parse_error("(1 + 2") == "position 6: expected ')', found end of expression");
  CHECK(parse_error("max(1, 2") == "position 8: expected ',' or ')', found end of expression");
  CHECK(parse_error("1 2") == "position 2: unexpected '2' after a complete expression");
  CHECK(parse_error("* 2") == "position 0: unexpected '*', expected a number, a name or '('");
  CHECK(parse_error("1 < 2 < 3") == "position 6: comparisons do not chain; use parentheses");
  CHECK(parse_error("2 + 12x") == "position 6: unexpected character 'x' in a number");
}

TEST_CASE("expr: function errors", "[expr]") {
  CHECK(parse_error("1 + floor(2)") ==
        "position 4: unknown function 'floor' (functions: min, max, ceil_div)");
  CHECK(parse_error("1 + min(2)") == "position 4: min takes at least 2 arguments, got 1");
  CHECK(parse_error("max(2)") == "position 0: max takes at least 2 arguments, got 1");
  CHECK(parse_error("ceil_div(1, 2, 3)") == "position 0: ceil_div takes exactly 2 arguments, got 3");
  CHECK(parse_error("ceil_div(1)") == "position 0: ceil_div takes exactly 2 arguments, got 1");
  CHECK(parse_error("min()") == "position 4: unexpected ')', expected a number, a name or '('");
}

TEST_CASE("expr: integer literal overflow", "[expr]") {
  CHECK(eval("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
  CHECK(parse_error("1 + 9223372036854775808") ==
        "position 4: integer literal 9223372036854775808 does not fit in 64 bits");
}

TEST_CASE("expr: evaluation errors give the position", "[expr]") {
  CHECK(eval_error("K % BK", {{"K", 4}, {"BK", 0}}) == "position 2: division by zero");
  CHECK(eval_error("1 + 4 / (2 - 2)") == "position 6: division by zero");
  CHECK(eval_error("2 * ceil_div(3, 0)") == "position 4: division by zero");
  CHECK(eval_error("BM + BX", {{"BM", 1}}) == "position 5: unknown name 'BX'");
}

TEST_CASE("expr: arithmetic overflow is an error, not undefined behaviour", "[expr]") {
  CHECK(eval_error("9223372036854775807 + 1") == "position 20: integer overflow");
  CHECK(eval_error("0 - 9223372036854775807 - 2") == "position 24: integer overflow");
  CHECK(eval_error("4611686018427387904 * 2") == "position 20: integer overflow");
  Env env{{"MIN", std::numeric_limits<std::int64_t>::min()}};
  CHECK(eval_error("MIN / -1", env) == "position 4: integer overflow");
  CHECK(eval_error("MIN % -1", env) == "position 4: integer overflow");
  CHECK(eval_error("-MIN", env) == "position 0: integer overflow");
}

TEST_CASE("expr: deep nesting is rejected, not a stack overflow", "[expr]") {
  std::string deep(5000, '(');
  CHECK_FALSE(Expr::parse(deep + "1" + std::string(5000, ')')).ok());
  std::string nested = std::string(100, '(') + "1" + std::string(100, ')');
  CHECK(eval(nested) == 1);
}
