// Text parsing of ptxas' verbose log and of PTX.
#include "runtime/device/cuda/cuda_ptxas_log.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kforge {

namespace {

/// The integer right before `suffix` in `line` ("40" in "Used 40 registers"), or -1.
std::int64_t number_before(const std::string& line, const std::string& suffix) {
  std::size_t pos = line.find(suffix);
  if (pos == std::string::npos) return -1;
  while (pos > 0 && line[pos - 1] == ' ') --pos;
  std::size_t start = pos;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1]))) --start;
  if (start == pos) return -1;
  return std::stoll(line.substr(start, pos - start));
}

std::int64_t number_after(const std::string& text, std::size_t pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  std::size_t end = pos;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == pos) return -1;
  return std::stoll(text.substr(pos, end - pos));
}

}  // namespace

PtxasReport parse_ptxas_log(const std::string& log, const std::string& kernel) {
  PtxasReport r;
  std::istringstream in(log);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      inside = line.find("'" + kernel + "'") != std::string::npos;
      continue;
    }
    if (!inside) continue;
    if (auto v = number_before(line, "bytes stack frame"); v >= 0) r.stack_bytes = v;
    if (auto v = number_before(line, "bytes spill stores"); v >= 0) r.spill_store_bytes = v;
    if (auto v = number_before(line, "bytes spill loads"); v >= 0) r.spill_load_bytes = v;
    if (line.find("Used ") != std::string::npos) {
      r.registers = number_before(line, "registers");
      const std::int64_t smem = number_before(line, "bytes smem");
      r.shared_bytes = smem < 0 ? 0 : smem;
    }
  }
  return r;
}

std::vector<CompilerDiagnostic> parse_ptxas_diagnostics(const std::string& log) {
  std::vector<CompilerDiagnostic> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("ptxas", 0) != 0) continue;
    const std::size_t open = line.find(": (C");
    const std::size_t close = open == std::string::npos ? open : line.find(')', open);
    if (close == std::string::npos) continue;
    CompilerDiagnostic d;
    d.code = line.substr(open + 3, close - open - 3);
    d.message = line.substr(std::min(close + 2, line.size()));
    while (!d.message.empty() && (d.message.back() == '\r' || d.message.back() == ' ')) d.message.pop_back();
    d.serializes_tensor_ops = d.message.find("wgmma.mma_async instructions are serialized") != std::string::npos;
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(std::move(d));
  }
  return out;
}

std::int64_t ptx_max_threads(const std::string& ptx, const std::string& kernel) {
  std::size_t entry = ptx.find(".entry " + kernel + "(");
  if (entry == std::string::npos) return -1;
  const std::size_t body = ptx.find('{', entry);
  for (const char* directive : {".reqntid", ".maxntid"}) {
    const std::size_t pos = ptx.find(directive, entry);
    if (pos == std::string::npos || pos > body) continue;
    std::int64_t product = 1;
    std::size_t p = pos + std::string(directive).size();
    for (int dim = 0; dim < 3; ++dim) {
      const std::int64_t v = number_after(ptx, p);
      if (v < 0) break;
      product *= v;
      p = ptx.find_first_not_of(" \t0123456789", p);
      if (p == std::string::npos || ptx[p] != ',') break;
      ++p;
    }
    return product;
  }
  return -1;
}

std::optional<std::int64_t> ptx_global_value(const std::string& ptx, const std::string& name) {
  std::size_t pos = 0;
  const std::string needle = " " + name + " = ";
  while ((pos = ptx.find(needle, pos)) != std::string::npos) {
    const std::size_t line_start = ptx.rfind('\n', pos);
    const std::string head = ptx.substr(line_start == std::string::npos ? 0 : line_start + 1,
                                        pos - (line_start == std::string::npos ? 0 : line_start + 1));
    if (head.find(".global") != std::string::npos || head.find(".const") != std::string::npos) {
      const std::int64_t v = number_after(ptx, pos + needle.size());
      if (v >= 0) return v;
    }
    pos += needle.size();
  }
  return std::nullopt;
}

}  // namespace kforge
