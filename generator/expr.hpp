// Integer expressions for manifest constraints, envelopes and launch geometry.
//
// Grammar (C precedence, 64-bit signed integers, comparisons yield 0 or 1):
//   expr    := or
//   or      := and ('||' and)*          and := cmp ('&&' cmp)*
//   cmp     := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//   sum     := term (('+'|'-') term)*   term := unary (('*'|'/'|'%') unary)*
//   unary   := ('!'|'-') unary | primary
//   primary := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
// Functions: min(a,b,...), max(a,b,...), ceil_div(a,b). Division and modulo
// truncate toward zero as in C; by zero is an evaluation error.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace kforge {

/// Values of the names an expression may read (parameters, problem dims, device limits).
using Env = std::map<std::string, std::int64_t, std::less<>>;

class Expr {
 public:
  struct Node;

  /// Parses `text`. On failure the error message starts with "position P: "
  /// (0-based character offset) and says what was expected or found.
  static Result<Expr> parse(std::string_view text);

  /// Evaluates against `env`. Errors ("position P: ...") for a name missing
  /// from env and for division or modulo by zero.
  Result<std::int64_t> eval(const Env& env) const;

  /// Every identifier the expression reads (not function names), sorted, unique.
  const std::vector<std::string>& names() const { return names_; }
  /// Position of the first occurrence of `name`, for error messages.
  std::size_t position_of(std::string_view name) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
  std::vector<std::string> names_;
};

}  // namespace kforge
