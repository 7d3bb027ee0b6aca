// The lookup's kernels through the on-disk binary cache: a fresh lookup (a
// new process, in effect) loads what an earlier one compiled; a damaged
// entry is compiled again; the cache can be turned off; entries written the
// way the tuner writes them are hits. A counting device tells whether the
// compiler really ran, independently of the lookup's own statistics.
#include <atomic>
#include <fstream>

#include "tests/forwarding_device.hpp"
#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

namespace {

/// Delegates to a real compiler and counts its calls.
class CountingCompiler : public Compiler {
 public:
  explicit CountingCompiler(Compiler& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::string version() const override { return inner_.version(); }
  Result<CompiledKernel> compile(const std::string& source, const std::string& kernel_name,
                                 const std::string& options) override {
    ++calls;
    return inner_.compile(source, kernel_name, options);
  }
  std::atomic<int> calls{0};

 private:
  Compiler& inner_;
};

/// A real device whose compiler is counted.
class CountingDevice : public test::ForwardingDevice {
 public:
  explicit CountingDevice(Device& inner) : ForwardingDevice(inner), compiler_(inner.compiler()) {}
  Compiler& compiler() override { return compiler_; }
  int compiles() const { return compiler_.calls; }

 private:
  CountingCompiler compiler_;
};

std::size_t entry_files(const std::string& dir) {
  std::size_t n = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); ++it) {
    n += it->is_regular_file() && it->path().extension() == ".bin";
  }
  return n;
}

/// Prepares `sel` in a fresh lookup over `o` and checks the launch; returns
/// the prepared kernel's origin and the lookup's statistics.
struct Prepared {
  KernelOrigin origin;
  std::string entry;
  KernelStats stats;
  int compiles;
};
Prepared prepare_fresh(Device& real, const LookupOptions& o, const Problem& p) {
  CountingDevice device(real);
  auto lookup = open_lookup(o, device, catalog_with());
  const Selection sel = select_ok(*lookup, p);
  auto prepared = lookup->prepare(sel);
  INFO((prepared.ok() ? "" : prepared.error().message));
  REQUIRE(prepared.ok());
  check_launch(*lookup, device, sel);
  return {(*prepared)->origin, (*prepared)->cache_entry, lookup->kernel_stats(), device.compiles()};
}

}  // namespace

TEST_CASE("a fresh lookup loads the kernel from the disk cache, it launches and validates",
          "[lookup][opencl][binary_cache]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  LookupOptions o = w.options(tuned_copy(**device, dir));
  o.binary_cache_dir = dir.file("binaries");
  const Problem p = gemm(33, 17, 9);

  const Prepared first = prepare_fresh(**device, o, p);
  CHECK(first.origin == KernelOrigin::kCompiled);
  CHECK(first.compiles == 1);
  CHECK(first.stats.compiles == 1);
  CHECK(first.stats.disk_hits == 0);
  REQUIRE(std::filesystem::exists(first.entry));
  CHECK(first.entry.rfind(o.binary_cache_dir + "/", 0) == 0);

  const Prepared second = prepare_fresh(**device, o, p);  // a fresh memory cache
  CHECK(second.origin == KernelOrigin::kDisk);
  CHECK(second.compiles == 0);
  CHECK(second.stats.disk_hits == 1);
  CHECK(second.stats.compiles == 0);
  CHECK(second.entry == first.entry);

  SECTION("a corrupt entry is compiled again, replaced, and the result is right") {
    std::string bytes = read_file(first.entry);
    REQUIRE(bytes.size() > 64);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
    write_file(first.entry, bytes);
    const Prepared rebuilt = prepare_fresh(**device, o, p);
    CHECK(rebuilt.origin == KernelOrigin::kCompiled);
    CHECK(rebuilt.compiles == 1);
    CHECK(rebuilt.stats.disk_corrupt == 1);
    CHECK(rebuilt.stats.disk_hits == 0);
    CHECK(read_file(first.entry) != bytes);  // replaced by a good entry
    const Prepared after = prepare_fresh(**device, o, p);
    CHECK(after.origin == KernelOrigin::kDisk);
    CHECK(after.compiles == 0);
  }
  SECTION("a truncated entry is compiled again") {
    const std::string bytes = read_file(first.entry);
    write_file(first.entry, bytes.substr(0, bytes.size() - 9));
    const Prepared rebuilt = prepare_fresh(**device, o, p);
    CHECK(rebuilt.origin == KernelOrigin::kCompiled);
    CHECK(rebuilt.compiles == 1);
    CHECK(rebuilt.stats.disk_corrupt == 1);
  }
  SECTION("turned off, the cache is neither read nor written") {
    LookupOptions off = o;
    off.use_binary_cache = false;
    std::filesystem::remove(first.entry);
    const Prepared compiled = prepare_fresh(**device, off, p);
    CHECK(compiled.origin == KernelOrigin::kCompiled);
    CHECK(compiled.compiles == 1);
    CHECK(compiled.entry.empty());
    CHECK(entry_files(o.binary_cache_dir) == 0);
    const Prepared again = prepare_fresh(**device, off, p);
    CHECK(again.compiles == 1);  // nothing was stored for it
  }
}

TEST_CASE("a kernel stored the way the tuner stores it is a hit for the lookup",
          "[lookup][opencl][binary_cache]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  LookupOptions o = w.options(tuned_copy(**device, dir));
  o.binary_cache_dir = dir.file("binaries");
  const TemplateCatalog catalog = catalog_with();
  CountingDevice counting(**device);
  auto lookup = open_lookup(o, counting, catalog_with());
  const Selection sel = select_ok(*lookup, gemm(33, 17, 9));

  // What the tuner does for a candidate: instantiate, key with the template
  // hash over the backend's prelude and no compiler options, get_or_compile.
  const TemplateSource* tpl = catalog.find(sel.template_name);
  REQUIRE(tpl != nullptr);
  const DeviceInfo& info = (*device)->info();
  auto cfg = Config::parse(sel.config);
  REQUIRE(cfg.ok());
  GemmOperator op;
  auto inst = instantiate(*tpl, prelude_text(info.backend), op, *cfg, sel.problem, info.limits());
  REQUIRE(inst.ok());
  auto cache = BinaryCache::open(o.binary_cache_dir);
  REQUIRE(cache.ok());
  const BinaryCacheKey key = make_cache_key(tpl->hash(prelude_text(info.backend)), *inst, sel.problem, info, "");
  bool hit = true;
  auto stored = cache->get_or_compile(
      key, [&] { return (*device)->compiler().compile(inst->source, inst->kernel_name, ""); }, &hit);
  REQUIRE(stored.ok());
  REQUIRE_FALSE(hit);

  auto prepared = lookup->prepare(sel);
  REQUIRE(prepared.ok());
  CHECK((*prepared)->origin == KernelOrigin::kDisk);
  CHECK((*prepared)->cache_entry == cache->entry_path(key));
  CHECK(counting.compiles() == 0);
  check_launch(*lookup, counting, sel);
}

TEST_CASE("an unusable binary cache directory is a warning, kernels still compile",
          "[lookup][opencl][binary_cache]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  LookupOptions o = w.options(tuned_copy(**device, dir));
  const std::string file = dir.file("a-file");
  write_file(file, "not a directory");
  o.binary_cache_dir = file + "/binaries";
  auto lookup = open_lookup(o, **device, catalog_with());
  const Selection sel = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(w.seen.empty());  // selecting touches no cache directory
  check_launch(*lookup, **device, sel);
  CHECK(lookup->binary_cache_dir().empty());
  CHECK(w.count("binary cache: cannot create directory '" + o.binary_cache_dir + "'") == 1);
  CHECK(lookup->kernel_stats().compiles == 1);
}

TEST_CASE("a lookup that only selects creates no binary cache directory", "[lookup][opencl][binary_cache]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  LookupOptions o = w.options(tuned_copy(**device, dir));
  o.binary_cache_dir = dir.file("binaries");
  auto lookup = open_lookup(o, **device, catalog_with());
  const Selection sel = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(lookup->binary_cache_dir() == o.binary_cache_dir);
  CHECK_FALSE(std::filesystem::exists(o.binary_cache_dir));
  REQUIRE(lookup->prepare(sel).ok());
  CHECK(std::filesystem::exists(o.binary_cache_dir));
}
