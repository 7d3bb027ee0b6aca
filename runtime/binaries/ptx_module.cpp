// PTX text reader: comments out, header directives, entry bodies split into statements.
#include "runtime/binaries/ptx_module.hpp"

#include <cctype>

namespace kforge {

namespace {

/// `text` with // and /* */ comments replaced by spaces (string literals kept).
std::string strip_comments(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}
bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view first_token(std::string_view s) {
  s = trim(s);
  std::size_t n = 0;
  while (n < s.size() && !is_space(s[n])) ++n;
  return s.substr(0, n);
}

/// Position of the directive `name` as a whole word at or after `from`, or npos.
std::size_t find_directive(const std::string& text, std::string_view name, std::size_t from) {
  for (auto p = text.find(name, from); p != std::string::npos; p = text.find(name, p + 1)) {
    const bool left = p == 0 || is_space(text[p - 1]);
    const std::size_t end = p + name.size();
    const bool right = end < text.size() && is_space(text[end]);
    if (left && right) return p;
  }
  return std::string::npos;
}

/// The argument of a header directive (".target sm_90, debug" -> "sm_90").
std::string directive_value(const std::string& text, std::string_view name) {
  const auto p = find_directive(text, name, 0);
  if (p == std::string::npos) return {};
  auto rest = std::string_view(text).substr(p + name.size());
  rest = rest.substr(0, rest.find('\n'));
  return std::string(trim(rest.substr(0, rest.find(','))));
}

/// ".maxntid 128, 1, 1" in the text between an entry's parameters and its body.
void read_ntid(std::string_view header, std::string_view name, std::array<std::int64_t, 3>& out) {
  const auto p = header.find(name);
  if (p == std::string_view::npos) return;
  std::size_t i = p + name.size();
  for (auto& v : out) {
    while (i < header.size() && (is_space(header[i]) || header[i] == ',')) ++i;
    if (i >= header.size() || !std::isdigit(static_cast<unsigned char>(header[i]))) return;
    v = 0;
    while (i < header.size() && std::isdigit(static_cast<unsigned char>(header[i])))
      v = v * 10 + (header[i++] - '0');
  }
}

/// The opcode of one statement, or empty for a directive or a bare label.
std::string opcode_of(std::string_view stmt) {
  stmt = trim(stmt);
  while (true) {  // leading labels ("$L__BB0_2:") and line information
    auto tok = first_token(stmt);
    if (tok == ".loc") {  // ".loc 1 23 5" ends at its line, with no semicolon
      const auto eol = stmt.find('\n');
      stmt = eol == std::string_view::npos ? std::string_view{} : trim(stmt.substr(eol + 1));
      continue;
    }
    if (tok.size() < 2 || tok.back() != ':' || tok.find("::") != std::string_view::npos) break;
    bool label = true;
    for (char c : tok.substr(0, tok.size() - 1)) label = label && is_ident(c);
    if (!label) break;
    stmt = trim(stmt.substr(tok.size()));
  }
  if (stmt.empty() || stmt.front() == '.') return {};
  if (stmt.front() == '@') stmt = trim(stmt.substr(first_token(stmt).size()));  // predicate guard
  return std::string(first_token(stmt));
}

}  // namespace

bool looks_like_ptx(std::string_view text) {
  const std::string clean = strip_comments(text.substr(0, 4096));
  return find_directive(clean + "\n", ".version", 0) != std::string::npos &&
         find_directive(clean + "\n", ".target", 0) != std::string::npos;
}

Result<PtxModule> parse_ptx(std::string_view raw) {
  const std::string text = strip_comments(raw) + "\n";
  PtxModule m;
  m.version = directive_value(text, ".version");
  m.target = directive_value(text, ".target");
  m.address_size = directive_value(text, ".address_size");
  if (m.version.empty()) return Error::bad_input("PTX: no .version directive");
  for (auto p = find_directive(text, ".entry", 0); p != std::string::npos;
       p = find_directive(text, ".entry", p + 1)) {
    std::size_t i = p + 6;
    while (i < text.size() && is_space(text[i])) ++i;
    const std::size_t name_begin = i;
    while (i < text.size() && is_ident(text[i])) ++i;
    PtxEntry e;
    e.name = text.substr(name_begin, i - name_begin);
    if (e.name.empty()) return Error::bad_input("PTX: .entry without a name at offset " + std::to_string(p));
    while (i < text.size() && is_space(text[i])) ++i;
    if (i < text.size() && text[i] == '(') {
      const auto close = text.find(')', i);
      if (close == std::string::npos)
        return Error::bad_input("PTX: entry " + e.name + ": parameter list not closed");
      i = close + 1;
    }
    const auto open = text.find('{', i);
    if (open == std::string::npos) return Error::bad_input("PTX: entry " + e.name + " has no body");
    const std::string_view header = std::string_view(text).substr(i, open - i);
    read_ntid(header, ".maxntid", e.maxntid);
    read_ntid(header, ".reqntid", e.reqntid);
    // Braces open and close scopes between statements; inside a statement
    // they are vector operands ("{%f1, %f2}") and belong to it.
    int depth = 0, operand_depth = 0;
    std::size_t stmt_begin = open + 1, j = open;
    for (; j < text.size(); ++j) {
      const char c = text[j];
      if (c == '{' && j > stmt_begin &&
          !opcode_of(std::string_view(text).substr(stmt_begin, j - stmt_begin)).empty()) {
        ++operand_depth;
        continue;
      }
      if (c == '}' && operand_depth > 0) {
        --operand_depth;
        continue;
      }
      if (c == '{' || c == '}' || c == ';') {
        if (j > stmt_begin) {
          if (auto op = opcode_of(std::string_view(text).substr(stmt_begin, j - stmt_begin)); !op.empty())
            e.opcodes.push_back(std::move(op));
        }
        stmt_begin = j + 1;
        if (c == '{') ++depth;
        if (c == '}' && --depth == 0) break;
      }
    }
    if (depth != 0) return Error::bad_input("PTX: the body of entry " + e.name + " is not closed");
    m.entries.push_back(std::move(e));
    p = j;
  }
  return m;
}

}  // namespace kforge
