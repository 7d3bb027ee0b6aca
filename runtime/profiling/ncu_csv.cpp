// parse_ncu_raw_csv: the raw page of Nsight Compute's CSV output.
#include "runtime/profiling/ncu_csv.hpp"

#include <cstdlib>
#include <optional>

namespace kforge {
namespace {

struct UnitScale {
  std::string_view unit, base;
  double factor;
};

// ncu prints units with SI prefixes unless --print-units base is given.
constexpr UnitScale kScales[] = {
    {"Kbyte", "byte", 1e3},
    {"Mbyte", "byte", 1e6},
    {"Gbyte", "byte", 1e9},
    {"Tbyte", "byte", 1e12},
    {"usecond", "nsecond", 1e3},
    {"msecond", "nsecond", 1e6},
    {"second", "nsecond", 1e9},
    {"Kbyte/second", "byte/second", 1e3},
    {"Mbyte/second", "byte/second", 1e6},
    {"Gbyte/second", "byte/second", 1e9},
    {"Tbyte/second", "byte/second", 1e12},
    {"Kcycle", "cycle", 1e3},
    {"Mcycle", "cycle", 1e6},
};

std::optional<double> number(std::string_view field) {
  std::string digits;
  for (char c : field) {
    if (c != ',') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;
  return v;
}

/// Metric columns hold names like dram__bytes_read.sum; the descriptive ones
/// (ID, Kernel Name, Block Size, ...) never contain "__".
bool is_metric(const std::string& column) {
  return column.find("__") != std::string::npos;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

}  // namespace

std::vector<std::string> split_csv_record(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

Result<std::vector<NcuKernelRow>> parse_ncu_raw_csv(std::string_view text, const std::string& source) {
  const auto lines = lines_of(text);
  std::size_t at = 0;
  std::string first_error;
  std::vector<std::string> header;
  for (; at < lines.size(); ++at) {
    if (lines[at].rfind("==ERROR==", 0) == 0 && first_error.empty()) first_error = std::string(lines[at]);
    if (lines[at].rfind("\"ID\",", 0) != 0) continue;
    header = split_csv_record(lines[at]);
    break;
  }
  if (header.empty()) {
    return Error::not_found(source + ": no ncu CSV header (a line starting \"ID\",) found" +
                            (first_error.empty() ? std::string() : "; ncu said: " + first_error));
  }
  std::size_t name_col = header.size(), id_col = 0;
  for (std::size_t c = 0; c < header.size(); ++c) {
    if (header[c] == "Kernel Name") name_col = c;
  }
  if (name_col == header.size()) {
    return Error::bad_input(source + ": line " + std::to_string(at + 1) +
                            ": the header has no \"Kernel Name\" column "
                            "(is this the raw page? run ncu with --page raw)");
  }
  if (++at >= lines.size()) return Error::bad_input(source + ": the header is not followed by a units line");
  const auto units = split_csv_record(lines[at]);
  if (units.size() != header.size()) {
    return Error::bad_input(source + ": line " + std::to_string(at + 1) + ": " +
                            std::to_string(units.size()) + " units for " + std::to_string(header.size()) +
                            " columns");
  }
  std::vector<NcuKernelRow> rows;
  for (++at; at < lines.size(); ++at) {
    if (lines[at].empty() || lines[at].rfind("==", 0) == 0) continue;
    const auto fields = split_csv_record(lines[at]);
    const std::string where = source + ": line " + std::to_string(at + 1);
    if (fields.size() != header.size()) {
      return Error::bad_input(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                              std::to_string(header.size()));
    }
    NcuKernelRow& row = rows.emplace_back();
    row.id = fields[id_col];
    row.kernel_name = fields[name_col];
    for (std::size_t c = 0; c < header.size(); ++c) {
      if (!is_metric(header[c]) || fields[c].empty() || fields[c] == "n/a") continue;
      const auto v = number(fields[c]);
      if (!v) return Error::bad_input(where + ": " + header[c] + ": '" + fields[c] + "' is not a number");
      CounterReading r{header[c], *v, units[c]};
      for (const UnitScale& s : kScales) {
        if (r.unit == s.unit) {
          r.value *= s.factor;
          r.unit = std::string(s.base);
        }
      }
      row.readings.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace kforge
