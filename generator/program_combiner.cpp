// Several instances of one template as one translation unit (program_combiner.hpp).
#include "generator/program_combiner.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

namespace kforge {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Each physical line of `text`, without its newline.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

/// For a preprocessor line `# directive NAME ...`: the directive and NAME.
std::pair<std::string, std::string> directive_of(std::string_view line) {
  std::size_t i = 0;
  auto skip_space = [&] {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  };
  auto word = [&] {
    const std::size_t start = i;
    while (i < line.size() && ident_char(line[i])) ++i;
    return std::string(line.substr(start, i - start));
  };
  skip_space();
  if (i >= line.size() || line[i] != '#') return {};
  ++i;
  skip_space();
  std::string directive = word();
  skip_space();
  if (i >= line.size() || !ident_start(line[i])) return {directive, {}};
  return {directive, word()};
}

/// `text` with comments, string and character literals and preprocessor
/// lines (with their continuations) blanked out, newlines kept.
std::string code_only(std::string_view text) {
  std::string out(text);
  std::size_t i = 0;
  bool line_start = true;
  auto blank = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to && k < out.size(); ++k) {
      if (out[k] != '\n') out[k] = ' ';
    }
  };
  while (i < out.size()) {
    const char c = out[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && (c == ' ' || c == '\t')) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      // A directive runs to the first newline not escaped by a backslash.
      std::size_t end = i;
      while (end < out.size() && !(out[end] == '\n' && (end == 0 || out[end - 1] != '\\'))) ++end;
      blank(i, end);
      i = end;
      continue;
    }
    line_start = false;
    if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      std::size_t end = out.find('\n', i);
      if (end == std::string::npos) end = out.size();
      blank(i, end);
      i = end;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      std::size_t end = out.find("*/", i + 2);
      end = end == std::string::npos ? out.size() : end + 2;
      blank(i, end);
      i = end;
    } else if (c == '"' || c == '\'') {
      std::size_t end = i + 1;
      while (end < out.size() && out[end] != c && out[end] != '\n') end += out[end] == '\\' ? 2 : 1;
      blank(i, end + 1);
      i = end + 1;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> macro_names(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view line : lines_of(text)) {
    auto [directive, name] = directive_of(line);
    if ((directive == "define" || directive == "undef") && !name.empty() &&
        std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

std::vector<std::string> file_scope_functions(std::string_view text) {
  const std::string code = code_only(text);
  // Tokens: identifiers, and every other non-space character on its own.
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < code.size();) {
    if (std::isspace(static_cast<unsigned char>(code[i]))) {
      ++i;
    } else if (ident_start(code[i])) {
      const std::size_t start = i;
      while (i < code.size() && ident_char(code[i])) ++i;
      tokens.push_back(code.substr(start, i - start));
    } else {
      tokens.push_back(std::string(1, code[i++]));
    }
  }
  std::vector<std::string> names;
  int braces = 0;
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] == "{") ++braces;
    if (tokens[t] == "}") --braces;
    if (braces != 0 || !ident_start(tokens[t][0]) || t + 1 >= tokens.size() || tokens[t + 1] != "(") continue;
    // NAME ( ... ) { : a definition; NAME ( ... ) ; or anything else: not.
    std::size_t k = t + 1;
    int parens = 0;
    for (; k < tokens.size(); ++k) {
      if (tokens[k] == "(") ++parens;
      if (tokens[k] == ")" && --parens == 0) break;
    }
    if (k + 1 < tokens.size() && tokens[k + 1] == "{" &&
        std::find(names.begin(), names.end(), tokens[t]) == names.end()) {
      names.push_back(tokens[t]);
    }
  }
  return names;
}

Result<std::string> combine_instances(const TemplateSource& tpl, std::string_view prelude,
                                      const std::vector<const Instance*>& instances) {
  const std::string& name = tpl.manifest.name;
  if (instances.empty()) return Error::bad_input("combine_instances: no instances of " + name);
  auto not_combined = [&](const std::string& why) {
    return Error{ErrorCode::kUnsupported, "template " + name + ": instances not combined into one program: " + why, {}};
  };
  const std::vector<std::string> prelude_macros = macro_names(prelude);
  auto in_prelude = [&](const std::string& m) {
    return std::find(prelude_macros.begin(), prelude_macros.end(), m) != prelude_macros.end();
  };
  // The prelude is expanded once, by the first instance: a template that
  // changes one of its macros would change what the later ones see.
  const std::vector<std::string> template_macros = macro_names(tpl.kernel_text);
  for (const std::string& m : template_macros) {
    if (in_prelude(m)) return not_combined("it defines or undefines the prelude's macro " + m);
  }
  // The instance's own defines come before the prelude (instantiate()).
  auto header_of = [&](const Instance& inst) -> std::optional<std::string_view> {
    const std::size_t at = prelude.empty() ? std::string::npos : inst.source.find(prelude);
    if (at == std::string::npos) return std::nullopt;
    return std::string_view(inst.source).substr(0, at);
  };
  const auto first_header = header_of(*instances[0]);
  if (!first_header) return not_combined("an instance's source does not hold the prelude");
  const std::vector<std::string> header_macros = macro_names(*first_header);
  auto is_macro = [&](const std::string& m) {
    return in_prelude(m) || std::find(template_macros.begin(), template_macros.end(), m) != template_macros.end() ||
           std::find(header_macros.begin(), header_macros.end(), m) != header_macros.end();
  };
  std::vector<std::string> helpers;
  for (const std::string& f : file_scope_functions(tpl.kernel_text)) {
    // A macro's name (the kernel's is KF_KERNEL_NAME) is unique per instance already.
    if (!is_macro(f)) helpers.push_back(f);
  }

  std::string out;
  std::map<std::string, std::string> shared_with_prelude;  ///< header macro -> its line, equal in every instance
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const Instance& inst = *instances[i];
    if (inst.template_name != name) {
      return Error::bad_input("combine_instances: instance of " + inst.template_name + " among those of " + name);
    }
    const auto header = header_of(inst);
    if (!header) return not_combined("an instance's source does not hold the prelude");
    std::vector<std::string> undo = macro_names(*header);
    for (std::string_view line : lines_of(*header)) {
      auto [directive, m] = directive_of(line);
      if (directive != "define" || !in_prelude(m)) continue;
      // Read by the prelude, which only the first instance expands.
      auto [it, fresh] = shared_with_prelude.emplace(m, std::string(line));
      if (!fresh && it->second != line) return not_combined("instances differ in " + m + ", which the prelude reads");
    }
    const std::string suffix = "__kf_combined_" + std::to_string(i);
    out += "// kforge combined program: instance " + std::to_string(i + 1) + " of " +
           std::to_string(instances.size()) + ", " + inst.config_name + "\n";
    for (const std::string& h : helpers) out += "#define " + h + " " + h + suffix + "\n";
    out += inst.source;
    if (!out.empty() && out.back() != '\n') out += '\n';
    // Back to the macro state before this instance, but for the prelude's.
    undo.insert(undo.end(), template_macros.begin(), template_macros.end());
    undo.insert(undo.end(), helpers.begin(), helpers.end());
    for (const std::string& m : undo) out += "#undef " + m + "\n";
  }
  return out;
}

}  // namespace kforge
