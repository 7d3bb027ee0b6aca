// Common CLI flags and helpers.
#include "tools/cli_common.hpp"

#include "core/significant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "generator/operator.hpp"
#include "generator/operator_declaration.hpp"
#include "runtime/device/device_registry.hpp"

namespace kforge::cli {

void add_db_flag(CLI::App& cmd, CommonOptions& o) { add_db_option(cmd, o, "Tuning database (SQLite)"); }

CLI::Option* add_db_option(CLI::App& cmd, CommonOptions& o, const std::string& help) {
  return cmd.add_option("--db", o.db, help)->check(non_empty_path())->capture_default_str();
}

CLI::Validator non_empty_path() {
  return CLI::Validator(
      [](const std::string& v) { return v.empty() ? std::string("empty path (give a file name)") : std::string(); },
      "PATH");
}

CLI::Validator finite_at_least(double min, bool inclusive) {
  const std::string bound = (inclusive ? ">= " : "> ") + fmt(min, 6);
  return CLI::Validator(
      [min, inclusive, bound](const std::string& v) {
        double x = 0;
        const bool number = CLI::detail::lexical_cast(v, x);
        if (number && std::isfinite(x) && (inclusive ? x >= min : x > min)) return std::string();
        return "'" + v + "' is not a finite number " + bound;
      },
      "NUMBER " + bound);
}

CLI::Validator integer_at_least(long long min) {
  return CLI::Validator(
      [min](const std::string& v) {
        long long x = 0;
        if (CLI::detail::lexical_cast(v, x) && x >= min) return std::string();
        return "'" + v + "' is not an integer >= " + std::to_string(min);
      },
      "INT >= " + std::to_string(min));
}

namespace {

constexpr const char* kDeviceGrammar =
    "auto (the best present), opencl:N, cuda:N, hip:N, or a device's key, arch, backend:arch or part of "
    "its name (see `kforge devices`); interpret:0 runs Triton templates under Triton's interpreter "
    "(validation only, docs/triton.md)";

}  // namespace

void add_device_flag(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--device", o.device, std::string("Device to run on: ") + kDeviceGrammar)->capture_default_str();
}

void add_device_filter_flag(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 std::string("Only the rows of this device: ") + kDeviceGrammar +
                     "; auto and BACKEND:N name the device present here that tune would use");
}

std::optional<std::string> device_filter(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (is_live_selector(text)) return unwrap(resolve_device(text)).hardware_key();
  return text;
}

void add_problem_flags(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--op", o.op,
                 "Operator (see `kforge templates`; default: the operator a --template declares, "
                 "else gemm)")
      ->capture_default_str()
      ->each([&o](const std::string&) { o.op_given = true; });
  cmd.add_option("--shape", o.shape,
                 "Problem dimensions, e.g. M=256,N=256,K=256[,batch=1] (default: the operator's default "
                 "problem, listed by `kforge templates`)");
  cmd.add_option("--dtype", o.dtype, "Input dtype: f32, f16, bf16")->capture_default_str();
  cmd.add_option("--layout", o.layout, "Operand layout: NN, NT, TN, TT")->capture_default_str();
  cmd.add_option("--epilogue", o.epilogue, "Fused epilogue: none, bias, relu, gelu, silu, bias+ACT")
      ->capture_default_str();
  cmd.add_option("--attr", o.attrs, "Operator attributes, e.g. kind=max,axis=all (docs/operators.md)");
}

void add_template_flag(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--template", o.template_dirs,
                 "Directory with a user template (manifest.json + source); repeatable");
}

void add_json_flag(CLI::App& cmd, CommonOptions& o) {
  cmd.add_flag("--json", o.json, "Machine-readable output (docs/cli.md)");
}

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string operator_name(const CommonOptions& o) {
  if (o.op_given) return o.op;
  for (const auto& dir : o.template_dirs) {
    auto declared = OperatorDeclaration::load_dir(dir);
    if (declared.ok() && *declared) return (*declared)->name;
  }
  return o.op;
}

Problem make_problem(const CommonOptions& o) {
  Problem p;
  p.op = operator_name(o);
  const Operator* op = find_operator(p.op);
  if (!op) {
    std::vector<std::string> known;
    for (const auto* x : all_operators()) known.emplace_back(x->name());
    // A declared operator is known once its template directory is loaded.
    throw ErrorException(Error::bad_input("--op: unknown operator '" + p.op + "' (known: " + join_names(known) +
                                          "; an operator declared in a template directory needs --template DIR)"));
  }
  p.dims = o.shape.empty() ? op->default_dims() : unwrap(parse_dims(o.shape));
  auto d = parse_dtype(o.dtype);
  if (!d) throw ErrorException(Error::bad_input("--dtype: unknown dtype '" + o.dtype + "' (f32, f16, bf16)"));
  p.dtype = *d;
  auto l = parse_layout(o.layout);
  if (!l) throw ErrorException(Error::bad_input("--layout: unknown layout '" + o.layout + "' (NN, NT, TN, TT)"));
  p.layout = *l;
  p.epilogue = unwrap(parse_epilogue(o.epilogue));
  p.attrs = unwrap(parse_attrs(o.attrs));
  auto normalized = op->normalize(p);
  if (!normalized.ok() && !o.shape.empty()) {
    // Name the dims this operator reads, by an example that works.
    Error e = normalized.error();
    Problem example;
    example.dims = op->default_dims();
    e.message += " (--shape for " + p.op + " takes " + join_names(op->dims()) + ", e.g. " +
                 example.dims_string() + ")";
    throw ErrorException(e);
  }
  return unwrap(std::move(normalized));
}

TemplateCatalog make_catalog(const CommonOptions& o) {
  TemplateCatalog c = unwrap(TemplateCatalog::builtin());
  for (const auto& dir : o.template_dirs) unwrap(c.add_dir(dir));
  return c;
}

std::unique_ptr<Device> open_device(const CommonOptions& o) { return unwrap(kforge::open_device(o.device)); }

std::string& command_line() {
  static std::string line;
  return line;
}

void print_json(const nlohmann::json& j) {
  if (j.is_object() && !j.contains("schema_version")) {
    nlohmann::json versioned = j;
    versioned["schema_version"] = kCliJsonSchemaVersion;
    std::cout << versioned.dump(2) << std::endl;
    return;
  }
  std::cout << j.dump(2) << std::endl;
}

namespace {

/// Splits "a: b: c" at each ": ".
std::vector<std::string> message_parts(const std::string& message) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  for (;;) {
    const auto next = message.find(": ", pos);
    parts.push_back(message.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + 2;
  }
  return parts;
}

bool names_file(const std::string& s) {
  if (s.empty() || s.rfind("--", 0) == 0 || s.find(' ') != std::string::npos) return false;
  std::error_code ec;
  return std::filesystem::exists(s, ec) || s.find('/') != std::string::npos || s.find('.') != std::string::npos;
}

bool names_field(const std::string& s) { return !s.empty() && s.find(' ') == std::string::npos; }

/// The first 'quoted' or "quoted" text in `s`.
std::optional<std::string> first_quoted(const std::string& s) {
  const auto open = s.find_first_of("'\"");
  if (open == std::string::npos) return std::nullopt;
  const auto close = s.find(s[open], open + 1);
  if (close == std::string::npos) return std::nullopt;
  return s.substr(open + 1, close - open - 1);
}

}  // namespace

nlohmann::json error_json(const std::string& message) {
  nlohmann::json j = {{"error", message}, {"file", nullptr}, {"field", nullptr}, {"value", nullptr}};
  const auto parts = message_parts(message);
  std::size_t at = 0;
  if (parts.size() > 1 && names_file(parts[0])) j["file"] = parts[at++];
  if (parts.size() > at + 1 && names_field(parts[at])) j["field"] = parts[at++];
  std::string rest;
  for (std::size_t i = at; i < parts.size(); ++i) rest += (i > at ? ": " : "") + parts[i];
  if (auto v = first_quoted(rest)) j["value"] = *v;
  return j;
}

void print_error(const std::string& message, bool json) {
  if (json) {
    std::cerr << error_json(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cerr << "kforge: error: " << message << "\n";
  }
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> w(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  auto line = [&](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      s += cell + std::string(w[i] - cell.size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    std::cout << s << "\n";
  };
  line(header);
  std::vector<std::string> rule;
  for (auto x : w) rule.push_back(std::string(x, '-'));
  line(rule);
  for (const auto& r : rows) line(r);
}

std::string fmt(double v, int precision) { return significant(v, precision); }

}  // namespace kforge::cli
