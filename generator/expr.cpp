// Manifest expressions: tokenizer, recursive-descent parser and checked int64 evaluation.
#include "generator/expr.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace kforge {

struct Expr::Node {
  enum class Kind { kInt, kName, kUnary, kBinary, kCall };
  Kind kind = Kind::kInt;
  std::size_t pos = 0;  ///< offset of the literal, name, operator or function name
  std::int64_t value = 0;
  std::string text;  ///< name, operator spelling or function name
  std::vector<std::shared_ptr<const Node>> kids;
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;
using Node = Expr::Node;

/// Deeper nesting and longer text than this are rejected: manifests are input,
/// and parsing and evaluation recurse.
constexpr int kMaxDepth = 200;
constexpr std::size_t kMaxLength = 4096;

std::string at(std::size_t pos) {
  return "position " + std::to_string(pos) + ": ";
}

struct Token {
  enum class Kind { kInt, kName, kOp, kEnd };
  Kind kind = Kind::kEnd;
  std::size_t pos = 0;
  std::string text;
  std::int64_t value = 0;
};

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

Result<std::vector<Token>> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (is_digit(c)) {
      std::size_t j = i;
      std::int64_t v = 0;
      bool overflow = false;
      while (j < s.size() && is_digit(s[j])) {
        overflow = overflow || __builtin_mul_overflow(v, std::int64_t{10}, &v) ||
                   __builtin_add_overflow(v, std::int64_t{s[j] - '0'}, &v);
        ++j;
      }
      if (j < s.size() && is_name_char(s[j])) {
        return Error::bad_input(at(j) + "unexpected character '" + std::string(1, s[j]) + "' in a number");
      }
      if (overflow) {
        return Error::bad_input(at(i) + "integer literal " + std::string(s.substr(i, j - i)) +
                                " does not fit in 64 bits");
      }
      t.kind = Token::Kind::kInt;
      t.value = v;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else if (is_name_start(c)) {
      std::size_t j = i;
      while (j < s.size() && is_name_char(s[j])) ++j;
      t.kind = Token::Kind::kName;
      t.text = std::string(s.substr(i, j - i));
      i = j;
    } else {
      static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
      static constexpr std::string_view kOne = "+-*/%<>!(),";
      t.kind = Token::Kind::kOp;
      std::string_view two = s.substr(i, 2);
      if (std::find(std::begin(kTwo), std::end(kTwo), two) != std::end(kTwo)) {
        t.text = std::string(two);
        i += 2;
      } else if (kOne.find(c) != std::string_view::npos) {
        t.text = std::string(1, c);
        i += 1;
      } else {
        std::string shown = std::isprint(static_cast<unsigned char>(c))
                                ? std::string("'").append(1, c).append("'")
                                : "byte " + std::to_string(static_cast<unsigned char>(c));
        return Error::bad_input(at(i) + "unexpected character " + shown);
      }
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.pos = s.size();
  out.push_back(end);
  return out;
}

std::string describe(const Token& t) {
  if (t.kind == Token::Kind::kEnd) return "end of expression";
  return "'" + t.text + "'";
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Result<NodePtr> parse_all() {
    KF_TRY_ASSIGN(root, parse_or(0));
    if (peek().kind != Token::Kind::kEnd) {
      if (is_cmp(peek())) {
        return Error::bad_input(at(peek().pos) + "comparisons do not chain; use parentheses");
      }
      return Error::bad_input(at(peek().pos) + "unexpected " + describe(peek()) +
                              " after a complete expression");
    }
    return root;
  }

 private:
  const Token& peek() const { return toks_[i_]; }
  const Token& next() { return toks_[i_ == toks_.size() - 1 ? i_ : i_++]; }
  bool at_op(std::string_view op) const { return peek().kind == Token::Kind::kOp && peek().text == op; }
  static bool is_cmp(const Token& t) {
    return t.kind == Token::Kind::kOp && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                          t.text == "<=" || t.text == ">" || t.text == ">=");
  }

  static NodePtr binary(const Token& op, NodePtr l, NodePtr r) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kBinary;
    n->pos = op.pos;
    n->text = op.text;
    n->kids = {std::move(l), std::move(r)};
    return n;
  }

  Status deeper(int depth) const {
    if (depth > kMaxDepth) {
      return Error::bad_input(at(peek().pos) + "expression nests deeper than " + std::to_string(kMaxDepth) +
                              " levels");
    }
    return ok_status();
  }

  // Left-associative binary level: operand (op operand)*.
  template <typename Sub>
  Result<NodePtr> left_assoc(int depth, std::initializer_list<std::string_view> ops, Sub sub) {
    KF_TRY_ASSIGN(lhs, (this->*sub)(depth));
    for (;;) {
      bool matched = false;
      for (std::string_view op : ops) matched = matched || at_op(op);
      if (!matched) return lhs;
      Token op = next();
      KF_TRY_ASSIGN(rhs, (this->*sub)(depth));
      lhs = binary(op, std::move(lhs), std::move(rhs));
    }
  }

  Result<NodePtr> parse_or(int depth) {
    KF_TRY(deeper(depth));
    return left_assoc(depth, {"||"}, &Parser::parse_and);
  }
  Result<NodePtr> parse_and(int depth) { return left_assoc(depth, {"&&"}, &Parser::parse_cmp); }
  Result<NodePtr> parse_cmp(int depth) {
    KF_TRY_ASSIGN(lhs, parse_sum(depth));
    if (!is_cmp(peek())) return lhs;
    Token op = next();
    KF_TRY_ASSIGN(rhs, parse_sum(depth));
    return binary(op, std::move(lhs), std::move(rhs));
  }
  Result<NodePtr> parse_sum(int depth) { return left_assoc(depth, {"+", "-"}, &Parser::parse_term); }
  Result<NodePtr> parse_term(int depth) { return left_assoc(depth, {"*", "/", "%"}, &Parser::parse_unary); }

  Result<NodePtr> parse_unary(int depth) {
    KF_TRY(deeper(depth));
    if (at_op("!") || at_op("-")) {
      Token op = next();
      KF_TRY_ASSIGN(operand, parse_unary(depth + 1));
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kUnary;
      n->pos = op.pos;
      n->text = op.text;
      n->kids = {std::move(operand)};
      return NodePtr(n);
    }
    return parse_primary(depth);
  }

  Status expect_close(const char* what) {
    if (at_op(")")) {
      next();
      return ok_status();
    }
    return Error::bad_input(at(peek().pos) + "expected " + what + ", found " + describe(peek()));
  }

  Result<NodePtr> parse_primary(int depth) {
    const Token& t = peek();
    if (t.kind == Token::Kind::kInt) {
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kInt;
      n->pos = t.pos;
      n->value = t.value;
      next();
      return NodePtr(n);
    }
    if (t.kind == Token::Kind::kName) {
      Token name = next();
      if (!at_op("(")) {
        auto n = std::make_shared<Node>();
        n->kind = Node::Kind::kName;
        n->pos = name.pos;
        n->text = name.text;
        return NodePtr(n);
      }
      return parse_call(name, depth);
    }
    if (at_op("(")) {
      next();
      KF_TRY_ASSIGN(inner, parse_or(depth + 1));
      KF_TRY(expect_close("')'"));
      return inner;
    }
    if (t.kind == Token::Kind::kEnd) {
      return Error::bad_input(at(t.pos) + "unexpected end of expression");
    }
    return Error::bad_input(at(t.pos) + "unexpected " + describe(t) + ", expected a number, a name or '('");
  }

  Result<NodePtr> parse_call(const Token& name, int depth) {
    const bool variadic = name.text == "min" || name.text == "max";
    if (!variadic && name.text != "ceil_div") {
      return Error::bad_input(at(name.pos) + "unknown function '" + name.text +
                              "' (functions: min, max, ceil_div)");
    }
    next();  // '('
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kCall;
    n->pos = name.pos;
    n->text = name.text;
    for (;;) {
      KF_TRY_ASSIGN(arg, parse_or(depth + 1));
      n->kids.push_back(std::move(arg));
      if (!at_op(",")) break;
      next();
    }
    KF_TRY(expect_close("',' or ')'"));
    const std::size_t count = n->kids.size();
    if (variadic && count < 2) {
      return Error::bad_input(at(name.pos) + name.text + " takes at least 2 arguments, got " +
                              std::to_string(count));
    }
    if (!variadic && count != 2) {
      return Error::bad_input(at(name.pos) + "ceil_div takes exactly 2 arguments, got " +
                              std::to_string(count));
    }
    return NodePtr(n);
  }

  std::vector<Token> toks_;
  std::size_t i_ = 0;
};

void collect_names(const Node& n, std::vector<std::string>& out) {
  if (n.kind == Node::Kind::kName) out.push_back(n.text);
  for (const auto& k : n.kids) collect_names(*k, out);
}

void first_position(const Node& n, std::string_view name, std::size_t& best) {
  if (n.kind == Node::Kind::kName && n.text == name) best = std::min(best, n.pos);
  for (const auto& k : n.kids) first_position(*k, name, best);
}

Error overflow(std::size_t pos) {
  return Error::bad_input(at(pos) + "integer overflow");
}
Error div_zero(std::size_t pos) {
  return Error::bad_input(at(pos) + "division by zero");
}

// Truncating division and remainder with C semantics; INT64_MIN / -1 is an overflow.
Result<std::int64_t> divide(std::int64_t a, std::int64_t b, bool modulo, std::size_t pos) {
  if (b == 0) return div_zero(pos);
  if (a == std::numeric_limits<std::int64_t>::min() && b == -1) return overflow(pos);
  return modulo ? a % b : a / b;
}

Result<std::int64_t> eval_node(const Node& n, const Env& env) {
  switch (n.kind) {
    case Node::Kind::kInt:
      return n.value;
    case Node::Kind::kName: {
      auto it = env.find(n.text);
      if (it == env.end()) return Error::bad_input(at(n.pos) + "unknown name '" + n.text + "'");
      return it->second;
    }
    case Node::Kind::kUnary: {
      KF_TRY_ASSIGN(v, eval_node(*n.kids[0], env));
      if (n.text == "!") return std::int64_t{v == 0};
      std::int64_t r = 0;
      if (__builtin_sub_overflow(std::int64_t{0}, v, &r)) return overflow(n.pos);
      return r;
    }
    case Node::Kind::kBinary: {
      const std::string& op = n.text;
      KF_TRY_ASSIGN(a, eval_node(*n.kids[0], env));
      // && and || short-circuit as in C, so "BK == 0 || K % BK == 0" is safe.
      if (op == "&&" && a == 0) return std::int64_t{0};
      if (op == "||" && a != 0) return std::int64_t{1};
      KF_TRY_ASSIGN(b, eval_node(*n.kids[1], env));
      std::int64_t r = 0;
      bool over = false;
      if (op == "+") over = __builtin_add_overflow(a, b, &r);
      if (op == "-") over = __builtin_sub_overflow(a, b, &r);
      if (op == "*") over = __builtin_mul_overflow(a, b, &r);
      if (over) return overflow(n.pos);
      if (op == "+" || op == "-" || op == "*") return r;
      if (op == "/") return divide(a, b, false, n.pos);
      if (op == "%") return divide(a, b, true, n.pos);
      if (op == "&&" || op == "||") return std::int64_t{b != 0};
      if (op == "==") return std::int64_t{a == b};
      if (op == "!=") return std::int64_t{a != b};
      if (op == "<") return std::int64_t{a < b};
      if (op == "<=") return std::int64_t{a <= b};
      if (op == ">") return std::int64_t{a > b};
      if (op == ">=") return std::int64_t{a >= b};
      return Error::internal(at(n.pos) + "unknown operator '" + op + "'");
    }
    case Node::Kind::kCall: {
      std::vector<std::int64_t> args;
      for (const auto& k : n.kids) {
        KF_TRY_ASSIGN(v, eval_node(*k, env));
        args.push_back(v);
      }
      if (n.text == "min") return *std::min_element(args.begin(), args.end());
      if (n.text == "max") return *std::max_element(args.begin(), args.end());
      // ceil_div: the exact ceiling of a / b, for any signs.
      KF_TRY_ASSIGN(q, divide(args[0], args[1], false, n.pos));
      const std::int64_t rem = args[0] % args[1];
      if (rem != 0 && ((rem > 0) == (args[1] > 0))) ++q;
      return q;
    }
  }
  return Error::internal("corrupt expression node");
}

}  // namespace

Result<Expr> Expr::parse(std::string_view text) {
  if (text.size() > kMaxLength) {
    return Error::bad_input(at(kMaxLength) + "expression longer than " + std::to_string(kMaxLength) +
                            " characters");
  }
  KF_TRY_ASSIGN(tokens, tokenize(text));
  Parser parser(std::move(tokens));
  KF_TRY_ASSIGN(root, parser.parse_all());
  Expr e;
  e.text_ = std::string(text);
  collect_names(*root, e.names_);
  std::sort(e.names_.begin(), e.names_.end());
  e.names_.erase(std::unique(e.names_.begin(), e.names_.end()), e.names_.end());
  e.root_ = std::move(root);
  return e;
}

Result<std::int64_t> Expr::eval(const Env& env) const {
  if (!root_) return Error::internal("evaluating an expression that was never parsed");
  return eval_node(*root_, env);
}

std::size_t Expr::position_of(std::string_view name) const {
  std::size_t best = std::string::npos;
  if (root_) first_position(*root_, name, best);
  return best == std::string::npos ? 0 : best;
}

}  // namespace kforge
