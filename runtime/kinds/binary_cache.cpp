// The on-disk binary cache: entry layout, checksums, atomic replacement.
//
// Entry layout (all integers little-endian):
//   "KFBC"  u32 format  u64 header_len  header (JSON)  u64 payload_len  payload
//   u64 checksum (FNV-1a 64 over every byte before it)
// The header holds the key text, kernel name, binary format, options, log,
// resources and compile time; the payload is the binary.
#include "runtime/kinds/binary_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/bounded_json.hpp"
#include "core/hash.hpp"

namespace kforge {

namespace {

constexpr char kMagic[4] = {'K', 'F', 'B', 'C'};

std::uint64_t fnv1a(const std::uint8_t* data, std::size_t n, std::uint64_t h = 1469598103934665603ull) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

/// Reads little-endian integers from a byte string; fails past the end.
class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  bool u64(std::uint64_t& v) {
    if (pos_ + 8 > s_.size()) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return true;
  }
  bool u32(std::uint32_t& v) {
    if (pos_ + 4 > s_.size()) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(s_[pos_ + i])) << (8 * i);
    pos_ += 4;
    return true;
  }
  bool bytes(std::size_t n, std::string_view& out) {
    if (n > s_.size() || pos_ + n > s_.size()) return false;
    out = std::string_view(s_).substr(pos_, n);
    pos_ += n;
    return true;
  }
  std::size_t pos() const { return pos_; }

 private:
  const std::string& s_;
  std::size_t pos_ = 0;
};

ResourceReport resources_from_json(const nlohmann::json& j) {
  ResourceReport r;
  auto get = [&](const char* name, std::int64_t& field) {
    if (j.contains(name) && j[name].is_number_integer()) field = j[name].get<std::int64_t>();
  };
  get("registers", r.registers);
  get("local_mem_bytes", r.local_mem_bytes);
  get("private_mem_bytes", r.private_mem_bytes);
  get("spill_stores", r.spill_stores);
  get("spill_loads", r.spill_loads);
  get("max_block_threads", r.max_block_threads);
  if (j.contains("diagnostics") && j["diagnostics"].is_array()) {
    for (const auto& d : j["diagnostics"]) {
      if (!d.is_object() || !d.contains("code") || !d["code"].is_string()) continue;
      CompilerDiagnostic c;
      c.code = d["code"].get<std::string>();
      if (d.contains("message") && d["message"].is_string()) c.message = d["message"].get<std::string>();
      c.serializes_tensor_ops = d.value("serializes_tensor_ops", false);
      r.diagnostics.push_back(std::move(c));
    }
  }
  return r;
}

std::string encode(const BinaryCacheKey& key, const CompiledKernel& k) {
  const nlohmann::json header = {{"key", key.text()},
                                 {"kernel_name", k.kernel_name},
                                 {"format", name(k.format)},
                                 {"options", k.options},
                                 {"log", k.log},
                                 {"resources", k.resources.to_json()},
                                 {"compile_ms", k.compile_ms}};
  const std::string h = header.dump();
  std::string out(kMagic, sizeof kMagic);
  put_u32(out, static_cast<std::uint32_t>(kBinaryCacheFormat));
  put_u64(out, h.size());
  out += h;
  put_u64(out, k.binary.size());
  out.append(reinterpret_cast<const char*>(k.binary.data()), k.binary.size());
  put_u64(out, fnv1a(reinterpret_cast<const std::uint8_t*>(out.data()), out.size()));
  return out;
}

/// The kernel in `bytes`, or nullopt when anything about it is wrong.
std::optional<CompiledKernel> decode(const std::string& bytes, const BinaryCacheKey& key) {
  Reader r(bytes);
  std::string_view magic, header, payload;
  std::uint32_t format = 0;
  std::uint64_t header_len = 0, payload_len = 0, checksum = 0;
  if (!r.bytes(4, magic) || std::memcmp(magic.data(), kMagic, 4) != 0) return std::nullopt;
  if (!r.u32(format) || format != static_cast<std::uint32_t>(kBinaryCacheFormat)) return std::nullopt;
  if (!r.u64(header_len) || !r.bytes(header_len, header)) return std::nullopt;
  if (!r.u64(payload_len) || !r.bytes(payload_len, payload)) return std::nullopt;
  const std::size_t body = r.pos();
  if (!r.u64(checksum) || r.pos() != bytes.size()) return std::nullopt;
  if (checksum != fnv1a(reinterpret_cast<const std::uint8_t*>(bytes.data()), body)) return std::nullopt;
  auto parsed = parse_json_bounded(header, "binary cache header");
  if (!parsed.ok()) return std::nullopt;
  nlohmann::json h = std::move(parsed).value();
  if (!h.is_object() || h.value("key", "") != key.text()) return std::nullopt;
  CompiledKernel k;
  k.kernel_name = h.value("kernel_name", "");
  k.options = h.value("options", "");
  k.format = parse_binary_format(h.value("format", "")).value_or(BinaryFormat::kUnknown);
  k.log = h.value("log", "");
  k.compile_ms = h.value("compile_ms", 0.0);
  if (h.contains("resources") && h["resources"].is_object()) k.resources = resources_from_json(h["resources"]);
  k.binary.assign(payload.begin(), payload.end());
  if (k.kernel_name.empty() || k.binary.empty()) return std::nullopt;
  return k;
}

bool read_whole(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = std::move(ss).str();
  return true;
}

std::string unique_suffix() {
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   std::hash<std::thread::id>{}(std::this_thread::get_id()));
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp.%d.%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(rng()));
  return buf;
}

}  // namespace

std::string BinaryCacheKey::text() const {
  // One field per line, each named: readable in a hex dump and unambiguous
  // (no field may contain a newline; options and versions never do).
  std::string t = "kforge-binary-cache " + std::to_string(kBinaryCacheFormat) + "\n";
  auto field = [&](const char* name, const std::string& v) {
    t += name;
    t += '=';
    for (char c : v) t += (c == '\n' ? ' ' : c);
    t += '\n';
  };
  field("template_hash", template_hash);
  field("config", config);
  field("dtype", dtype);
  field("layout", layout);
  field("variant", variant);
  field("backend", backend);
  field("arch", arch);
  field("compiler", compiler);
  field("compiler_version", compiler_version);
  field("options", options);
  field("source_hash", source_hash);
  return t;
}

std::string BinaryCacheKey::digest() const {
  const std::string t = text();
  return Hasher().add(t).hex() + Hasher().add("kforge binary cache").add(t).hex();
}

BinaryCacheKey make_cache_key(const std::string& template_hash, const Instance& instance,
                              const Problem& problem, const DeviceInfo& device,
                              const std::string& options) {
  BinaryCacheKey k;
  k.template_hash = template_hash;
  k.config = instance.config_name;
  k.dtype = std::string(dtype_name(problem.dtype));
  k.layout = problem.layout.name();
  // Problem::key() is "op/dims/dtype/layout[/epilogue][/attributes]": what
  // follows the layout changes the generated source, the dims do not.
  std::string variant;
  const std::string pk = problem.key();
  std::size_t pos = pk.find('/');
  for (int slash = 1; slash < 4 && pos != std::string::npos; ++slash) pos = pk.find('/', pos + 1);
  if (pos != std::string::npos) variant = pk.substr(pos + 1);
  k.variant = variant;
  k.backend = device.backend;
  k.arch = device.arch;
  k.compiler = device.compiler;
  k.compiler_version = device.compiler_version;
  k.options = options;
  k.source_hash = Hasher().add(instance.source).hex();
  return k;
}

Result<BinaryCache> BinaryCache::open(const std::string& dir) {
  if (dir.empty()) return Error::bad_input("binary cache: empty directory name");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    return Error::bad_input("binary cache: cannot create directory '" + dir + "'" +
                            (ec ? ": " + ec.message() : ""));
  }
  if (access(dir.c_str(), W_OK) != 0) {
    return Error::bad_input("binary cache: directory '" + dir + "' is not writable");
  }
  return BinaryCache(dir);
}

std::string BinaryCache::default_dir() {
  if (const char* d = std::getenv("KFORGE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/kforge/binaries";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/kforge/binaries";
  return "/tmp/kforge-binaries";
}

BinaryCache::BinaryCache(BinaryCache&& o) noexcept
    : dir_(std::move(o.dir_)), hits_(o.hits_.load()), misses_(o.misses_.load()),
      corrupt_(o.corrupt_.load()), writes_(o.writes_.load()) {}

std::string BinaryCache::entry_path(const BinaryCacheKey& key) const {
  return dir_ + "/" + relative_path(key.digest());
}

std::string BinaryCache::relative_path(const std::string& digest) {
  return digest.substr(0, 2) + "/" + digest + ".bin";
}

bool BinaryCache::is_digest(const std::string& text) {
  return text.size() == 32 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<CompiledKernel> BinaryCache::get(const BinaryCacheKey& key) {
  const std::string path = entry_path(key);
  std::string bytes;
  if (!read_whole(path, bytes)) {
    ++misses_;
    return std::nullopt;
  }
  auto k = decode(bytes, key);
  if (!k) {
    // Corrupt, or a digest collision with another key: either way not ours.
    std::error_code ec;
    std::filesystem::remove(path, ec);
    ++corrupt_;
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return k;
}

Status BinaryCache::put(const BinaryCacheKey& key, const CompiledKernel& compiled) {
  // A deferred binary is fetched here, only for what is actually stored.
  const CompiledKernel* with_binary = &compiled;
  CompiledKernel fetched;
  if (compiled.binary.empty() && compiled.fetch_binary) {
    fetched = compiled;
    KF_TRY(fetched.ensure_binary());
    with_binary = &fetched;
  }
  const CompiledKernel& kernel = *with_binary;
  const std::string path = entry_path(key);
  const std::string parent = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  const std::string tmp = path + unique_suffix();
  const std::string bytes = encode(key, kernel);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Error::internal("binary cache: cannot create " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Error::internal("binary cache: cannot write " + tmp + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Error::internal("binary cache: cannot rename " + tmp + " to " + path + ": " + why);
  }
  ++writes_;
  return ok_status();
}

Result<CompiledKernel> BinaryCache::get_or_compile(const BinaryCacheKey& key,
                                                   const std::function<Result<CompiledKernel>()>& compile,
                                                   bool* hit, Store store) {
  if (auto k = get(key)) {
    if (hit) *hit = true;
    return std::move(*k);
  }
  if (hit) *hit = false;
  KF_TRY_ASSIGN(k, compile());
  // A cache that cannot be written costs speed, not correctness.
  if (store == Store::kAlways || !k.binary.empty()) (void)put(key, k);
  return k;
}

BinaryCache::Stats BinaryCache::stats() const {
  return Stats{hits_.load(), misses_.load(), corrupt_.load(), writes_.load()};
}

}  // namespace kforge
