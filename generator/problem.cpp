// Problem keys, epilogue names and the parsing of dims, epilogues and attributes.
#include "generator/problem.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace kforge {

namespace {

constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                       Activation::kSilu};

bool is_attr_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
          c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view activation_name(Activation a) {
  switch (a) {
    case Activation::kNone: return "none";
    case Activation::kRelu: return "relu";
    case Activation::kGelu: return "gelu";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

std::optional<Activation> parse_activation(std::string_view s) {
  for (Activation a : kActivations) {
    if (activation_name(a) == s) return a;
  }
  return std::nullopt;
}

std::string Epilogue::name() const {
  if (plain()) return "none";
  if (activation == Activation::kNone) return "bias";
  std::string s = bias ? "bias+" : "";
  s.append(activation_name(activation));
  return s;
}

Result<Epilogue> parse_epilogue(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error::bad_input("epilogue '" + std::string(text) + "': " + why +
                            " (known: none, bias, relu, gelu, silu, bias+relu, bias+gelu, bias+silu)");
  };
  if (text == "none") return Epilogue{};
  Epilogue e;
  bool have_activation = false;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('+', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(pos, end - pos);
    if (part == "bias") {
      if (e.bias) return bad("'bias' given twice");
      e.bias = true;
    } else if (auto a = parse_activation(part); a && *a != Activation::kNone) {
      if (have_activation) return bad("more than one activation");
      e.activation = *a;
      have_activation = true;
    } else {
      return bad("unknown part '" + std::string(part) + "'");
    }
    pos = end + 1;
  }
  return e;
}

std::string Problem::dims_string() const {
  std::string s;
  for (const auto& [k, v] : dims) {
    if (!s.empty()) s += ',';
    s += k + "=" + std::to_string(v);
  }
  return s;
}

std::string Problem::attrs_string() const {
  std::string s;
  for (const auto& [k, v] : attrs) {
    if (!s.empty()) s += ',';
    s += k + "=" + v;
  }
  return s;
}

std::string Problem::key() const {
  std::string k = op + "/" + dims_string() + "/" + std::string(dtype_name(dtype)) + "/" + layout.name();
  if (!epilogue.plain()) {
    k += '/';
    k += epilogue.name();
  }
  if (!attrs.empty()) {
    k += '/';
    k += attrs_string();
  }
  return k;
}

std::string problem_family(std::string_view key) {
  const auto first = key.find('/');
  if (first == std::string_view::npos) return std::string(key);
  const auto second = key.find('/', first + 1);
  std::string out(key.substr(0, first));
  if (second != std::string_view::npos) out += key.substr(second);
  return out;
}

double dims_log2_distance(const std::map<std::string, std::int64_t>& a,
                          const std::map<std::string, std::int64_t>& b) {
  constexpr double kNotComparable = std::numeric_limits<double>::infinity();
  if (a.size() != b.size()) return kNotComparable;
  double d = 0;
  for (const auto& [name, v] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second <= 0 || v <= 0) return kNotComparable;
    d += std::fabs(std::log2(static_cast<double>(v)) - std::log2(static_cast<double>(it->second)));
  }
  return d;
}

std::int64_t Problem::dim(const std::string& name) const {
  auto it = dims.find(name);
  return it == dims.end() ? 0 : it->second;
}

std::string Problem::attr(const std::string& name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? std::string() : it->second;
}

Result<std::map<std::string, std::int64_t>> parse_dims(std::string_view text) {
  std::map<std::string, std::int64_t> dims;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(pos, end - pos);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error::bad_input("shape '" + std::string(text) + "': expected NAME=VALUE, got '" +
                              std::string(item) + "'");
    }
    std::string name(item.substr(0, eq));
    std::string_view num = item.substr(eq + 1);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
    if (ec != std::errc() || p != num.data() + num.size() || v <= 0) {
      return Error::bad_input("shape '" + std::string(text) + "': " + name +
                              " must be a positive integer, got '" + std::string(num) + "'");
    }
    if (!dims.emplace(name, v).second) {
      return Error::bad_input("shape '" + std::string(text) + "': " + name + " given twice");
    }
    pos = end + 1;
  }
  return dims;
}

Result<std::map<std::string, std::string>> parse_attrs(std::string_view text) {
  std::map<std::string, std::string> attrs;
  if (text.empty()) return attrs;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    const std::size_t eq = item.find('=');
    const std::string_view name = eq == std::string_view::npos ? item : item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (eq == std::string_view::npos || !is_attr_word(name) || !is_attr_word(value)) {
      return Error::bad_input("attributes '" + std::string(text) + "': expected name=value (lower-case " +
                              "letters, digits, '_'), got '" + std::string(item) + "'");
    }
    if (!attrs.emplace(std::string(name), std::string(value)).second) {
      return Error::bad_input("attributes '" + std::string(text) + "': " + std::string(name) + " given twice");
    }
    pos = end + 1;
  }
  return attrs;
}

}  // namespace kforge
