// A small .npy reader and writer: the header is a Python dict literal with
// 'descr', 'fortran_order' and 'shape', padded so the data is 64-byte aligned.
#include "generator/npy_file.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/printable.hpp"

namespace kforge {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::size_t element_size(const std::string& descr) {
  if (descr == "|i1" || descr == "|u1") return 1;
  if (descr == "<f2") return 2;
  if (descr == "<f4" || descr == "<i4") return 4;
  if (descr == "<f8" || descr == "<i8") return 8;
  return 0;
}

double half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(frac, -24);
  else if (exp == 31)
    v = frac ? std::nan("") : INFINITY;
  else
    v = std::ldexp(frac + 1024, exp - 25);
  return sign ? -v : v;
}

double element_at(const std::string& descr, const unsigned char* p) {
  if (descr == "<f2") {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return half_to_double(h);
  }
  if (descr == "<f4") {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (descr == "|i1") return static_cast<std::int8_t>(*p);
  if (descr == "|u1") return *p;
  if (descr == "<i4") {
    std::int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  if (descr == "<i8") {
    std::int64_t i;
    std::memcpy(&i, p, 8);
    return static_cast<double>(i);
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

/// The value of `'key': VALUE` in the header dict, up to the next ',' outside brackets.
std::string dict_value(const std::string& header, const std::string& key) {
  const std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  std::size_t colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  std::size_t i = colon + 1, depth = 0;
  std::string v;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if ((c == ',' || c == '}') && depth == 0) break;
    v += c;
  }
  const auto first = v.find_first_not_of(" "), last = v.find_last_not_of(" ");
  return first == std::string::npos ? "" : v.substr(first, last - first + 1);
}

Result<std::vector<std::uint64_t>> parse_shape(const std::string& text, const std::string& path) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return Error::bad_input(path + ": header: shape '" + printable(text) + "' is not a tuple");
  }
  std::vector<std::uint64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::size_t pos = 0;
  while (pos < inner.size()) {
    std::size_t end = inner.find(',', pos);
    if (end == std::string::npos) end = inner.size();
    std::string part = inner.substr(pos, end - pos);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (!part.empty()) {
      if (part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18) {
        return Error::bad_input(path + ": header: shape '" + printable(text) + "' has a bad dimension '" +
                                printable(part) + "'");
      }
      shape.push_back(std::stoull(part));
    }
    pos = end + 1;
  }
  return shape;
}

}  // namespace

std::uint64_t NpyArray::elements() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return UINT64_MAX;
  }
  return n;
}

std::string NpyArray::shape_text() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::bad_input(path + ": cannot open the .npy file");
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_npy(bytes, path);
}

Result<NpyArray> parse_npy(std::string_view text, const std::string& path) {
  const std::string bytes(text);
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) {
    return Error::bad_input(path + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    return Error::bad_input(path + ": .npy format version " + std::to_string(major) +
                            " is not supported (1-3)");
  }
  std::size_t header_len = 0, offset = 0;
  const auto* u = reinterpret_cast<const unsigned char*>(bytes.data());
  if (major == 1) {
    header_len = u[8] | (u[9] << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) return Error::bad_input(path + ": truncated .npy header");
    header_len = u[8] | (u[9] << 8) | (u[10] << 16) | (static_cast<std::size_t>(u[11]) << 24);
    offset = 12;
  }
  if (offset + header_len > bytes.size()) return Error::bad_input(path + ": truncated .npy header");
  const std::string header = bytes.substr(offset, header_len);
  NpyArray a;
  std::string descr = dict_value(header, "descr");
  if (descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"'))
    descr = descr.substr(1, descr.size() - 2);
  if (descr == "|f2" || descr == "=f2") descr = "<f2";
  if (descr == "<i1" || descr == "=i1") descr = "|i1";
  if (descr == "<u1" || descr == "=u1") descr = "|u1";
  a.descr = descr;
  if (element_size(descr) == 0) {
    return Error::bad_input(path + ": header: dtype '" + printable(descr) +
                            "' is not supported (known: <f2, <f4, <f8, |i1, |u1, <i4, <i8)");
  }
  if (dict_value(header, "fortran_order") != "False") {
    return Error::bad_input(path + ": header: fortran_order must be False (C order)");
  }
  KF_TRY_ASSIGN(shape, parse_shape(dict_value(header, "shape"), path));
  a.shape = std::move(shape);
  const std::uint64_t n = a.elements();
  const std::size_t data = offset + header_len;
  const std::size_t size = element_size(descr);
  if (n > (bytes.size() - data) / size || (bytes.size() - data) != n * size) {
    return Error::bad_input(path + ": data holds " + std::to_string((bytes.size() - data) / size) +
                            " elements, shape " + a.shape_text() + " needs " + std::to_string(n));
  }
  a.values.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) a.values[i] = element_at(descr, u + data + i * size);
  return a;
}

Status write_npy(const std::string& path, const std::vector<double>& values, const std::string& descr) {
  if (descr != "<f4" && descr != "<f8" && descr != "<i4")
    return Error::bad_input("write_npy: dtype '" + descr + "' (writes <f4, <f8, <i4)");
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(values.size()) + ",), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (double v : values) {
    if (descr == "<f4") {
      const float f = static_cast<float>(v);
      out.append(reinterpret_cast<const char*>(&f), 4);
    } else if (descr == "<i4") {
      const auto i = static_cast<std::int32_t>(v);
      out.append(reinterpret_cast<const char*>(&i), 4);
    } else {
      out.append(reinterpret_cast<const char*>(&v), 8);
    }
  }
  std::ofstream f(path, std::ios::binary);
  f << out;
  if (!f) return Error::bad_input(path + ": cannot write the .npy file");
  return ok_status();
}

}  // namespace kforge
