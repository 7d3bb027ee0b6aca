// The lookup's frame: opening the databases, overrides, the selection cache
// (hot path), warnings once, and the compiled-kernel cache. The chain itself
// is lookup_chain.cpp.
#include "runtime/lookup/lookup.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/bounded_json.hpp"
#include "core/hash.hpp"
#include "core/printable.hpp"
#include "generator/instance.hpp"
#include "runtime/kinds/template_kind.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "runtime/lookup/launch_arguments.hpp"
#include "runtime/lookup/lookup_source.hpp"
#include "runtime/lookup/named_arguments.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge {

namespace {

void warn_to_stderr(const std::string& message) {
  std::cerr << "kforge: warning: " << message << "\n";
}

}  // namespace

Lookup::Lookup(std::vector<std::unique_ptr<LookupSource>> sources, Device& device,
               TemplateCatalog catalog, std::function<void(const std::string&)> on_warning)
    : sources_(std::move(sources)),
      device_(device),
      catalog_(std::move(catalog)),
      checker_(catalog_, device_.info()),
      on_warning_(on_warning ? std::move(on_warning) : warn_to_stderr) {}

Lookup::~Lookup() = default;

Result<std::unique_ptr<Lookup>> Lookup::open(const std::string& db_path, Device& device,
                                             TemplateCatalog catalog) {
  LookupOptions options;
  options.user_db = db_path;
  return open(options, device, std::move(catalog));
}

Result<std::unique_ptr<Lookup>> Lookup::open(const LookupOptions& options, Device& device,
                                             TemplateCatalog catalog) {
  std::vector<std::unique_ptr<LookupSource>> sources;
  if (!options.user_db.empty()) {
    KF_TRY_ASSIGN(user, open_lookup_source(options.user_db, "user"));
    sources.push_back(std::move(user));
  }
  if (!options.system_db.empty()) {
    KF_TRY_ASSIGN(system, open_lookup_source(options.system_db, "system"));
    sources.push_back(std::move(system));
  }
  std::unique_ptr<Lookup> lookup(
      new Lookup(std::move(sources), device, std::move(catalog), options.on_warning));
  OnlineTuningOptions online = options.online;
  if (options.env_overrides) {
    lookup->read_env_overrides();
    lookup->read_env_policies();
    KF_TRY_ASSIGN(from_env, online_options_from_env(online));
    online = std::move(from_env);
  }
  if (online.mode != OnlineMode::kOff) KF_TRY(lookup->set_online_tuning(online));
  if (options.use_binary_cache) {
    // Opened (and created) at the first prepare: a lookup that only selects
    // touches no cache directory.
    lookup->binary_cache_dir_ =
        options.binary_cache_dir.empty() ? BinaryCache::default_dir() : options.binary_cache_dir;
  }
  return lookup;
}

void Lookup::read_env_overrides() {
  for (const Operator* op : all_operators()) {
    std::string var = "KFORGE_OVERRIDE_";
    for (char c : op->name()) var += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const char* value = std::getenv(var.c_str());
    if (value == nullptr || *value == '\0') continue;
    const std::string text = value;
    const auto colon = text.find(':');
    Override o;
    o.origin = var;
    if (colon == std::string::npos) {
      o.error = var + "='" + printable(text) + "': expected TEMPLATE:CONFIG, e.g. gemm_simt_tiled:" +
                "BK16_BM64_BN64_TM4_TN4";
    } else {
      o.template_name = text.substr(0, colon);
      o.config = text.substr(colon + 1);
      EntryCheck c = checker_.check_stored(o.template_name, "", o.config);
      if (c.usable() && c.tpl->manifest.op != op->name()) {
        c.reason = o.template_name + " implements " + c.tpl->manifest.op + ", not " +
                   std::string(op->name());
        c.verdict = EntryVerdict::kWrongOperator;
      }
      if (!c.usable()) o.error = var + ": " + c.reason;
    }
    if (!o.error.empty()) warn_once("override " + var, o.error + "; the override is ignored");
    overrides_.emplace(std::string(op->name()), std::move(o));
  }
}

void Lookup::read_env_policies() {
  for (const Operator* op : all_operators()) {
    auto policy = library_policy_from_env(op->name());
    if (!policy.ok()) {
      warn_once("policy " + std::string(op->name()),
                policy.error().message + "; library candidates are compared");
    } else if (*policy != LibraryPolicy::kCompare) {
      policies_[std::string(op->name())] = Policy{*policy, library_policy_variable(op->name())};
    }
  }
}

Status Lookup::set_library_policy(std::string_view op, LibraryPolicy policy) {
  if (find_operator(op) == nullptr) {
    return Error::bad_input("library policy: unknown operator '" + printable(op) + "'");
  }
  std::lock_guard lock(select_mutex_);
  policies_[std::string(op)] = Policy{policy, "set_library_policy"};
  cache_.clear();
  return ok_status();
}

Status Lookup::set_override(std::string_view op, std::string_view template_name,
                            std::string_view config) {
  if (find_operator(op) == nullptr) {
    return Error::bad_input("override: unknown operator '" + printable(op) + "'");
  }
  EntryCheck c = checker_.check_stored(template_name, "", config);
  if (!c.usable()) return Error::bad_input("override for " + std::string(op) + ": " + c.reason);
  if (c.tpl->manifest.op != op) {
    return Error::bad_input("override for " + std::string(op) + ": " + std::string(template_name) +
                            " implements " + c.tpl->manifest.op);
  }
  {
    std::lock_guard lock(select_mutex_);
    overrides_[std::string(op)] =
        Override{std::string(template_name), std::string(config), "set_override", ""};
    cache_.clear();
  }
  return ok_status();
}

void Lookup::clear_override(std::string_view op) {
  std::lock_guard lock(select_mutex_);
  if (auto it = overrides_.find(op); it != overrides_.end()) overrides_.erase(it);
  cache_.clear();
}

void Lookup::warn_once(const std::string& key, const std::string& message) {
  if (warned_.insert(key).second) on_warning_(message);
}

Result<const Selection*> Lookup::select_ref(const Problem& problem) {
  const std::uint64_t hash = problem_hash(problem);
  if (const Selection* hit = cache_.find(problem, hash)) return hit;  // the hot path
  std::lock_guard lock(select_mutex_);
  if (const Selection* hit = cache_.find(problem, hash)) return hit;
  KF_TRY_ASSIGN(sel, select_uncached(problem));
  if (online_) {
    KF_TRY_ASSIGN(answered, answer_online(problem, std::move(sel)));
    return cache_.insert(problem, std::move(answered));
  }
  return cache_.insert(problem, std::move(sel));
}

Result<Selection> Lookup::select(const Problem& problem) {
  KF_TRY_ASSIGN(sel, select_ref(problem));
  return *sel;
}

class Lookup::CachedBinaries final : public BinarySource {
 public:
  CachedBinaries(Lookup& lookup, PreparedKernel& prepared) : lookup_(lookup), prepared_(prepared) {}

  Result<CompiledKernel> obtain(const BuildInput& input, const Compile& compile, KernelBuild& out) override {
    lookup_.open_binary_cache();
    out.origin = KernelOrigin::kCompiled;
    if (!lookup_.binary_cache_) return compile();
    BinaryCache& cache = *lookup_.binary_cache_;
    const DeviceInfo& info = input.device.info();
    key_ = make_cache_key(input.tpl.hash(prelude_text(info.backend)), input.inst, input.problem, info, "");
    template_kind(input.tpl).key_compiler(key_);
    prepared_.cache_entry = cache.entry_path(key_);
    const std::int64_t corrupt_before = cache.stats().corrupt;
    KF_TRY_ASSIGN(compiled, cache.get_or_compile(key_, compile, &out.cache_hit));
    if (const std::int64_t corrupt = cache.stats().corrupt - corrupt_before; corrupt > 0) {
      std::unique_lock write(lookup_.kernel_mutex_);
      lookup_.kernel_stats_.disk_corrupt += corrupt;
    }
    if (out.cache_hit) out.origin = KernelOrigin::kDisk;
    return compiled;
  }

  Result<CompiledKernel> replace_refused(const BuildInput&, const Compile& compile, const Error& refused,
                                         KernelBuild& out) override {
    {
      std::unique_lock write(lookup_.kernel_mutex_);
      ++lookup_.kernel_stats_.disk_load_failures;
    }
    {
      std::lock_guard lock(lookup_.select_mutex_);  // warned_ is the select path's
      lookup_.warn_once("binary cache load\n" + prepared_.cache_entry,
                        "binary cache entry " + prepared_.cache_entry + " could not be loaded (" +
                            refused.message + "); compiling it again");
    }
    out.origin = KernelOrigin::kCompiled;
    out.cache_hit = false;
    KF_TRY_ASSIGN(fresh, compile());
    (void)lookup_.binary_cache_->put(key_, fresh);  // an unwritable cache costs speed only
    return fresh;
  }

 private:
  Lookup& lookup_;
  PreparedKernel& prepared_;
  BinaryCacheKey key_;
};

Result<const PreparedKernel*> Lookup::prepare(const Selection& selection) {
  std::string key = selection.template_name;
  key += '\x1f';
  key += selection.config;
  key += '\x1f';
  key += selection.problem.key();
  {
    std::shared_lock read(kernel_mutex_);
    if (auto it = prepared_.find(key); it != prepared_.end()) return it->second.get();
  }
  std::lock_guard compiling(compile_mutex_);  // one compile at a time; others wait for it
  {
    std::shared_lock read(kernel_mutex_);
    if (auto it = prepared_.find(key); it != prepared_.end()) return it->second.get();
  }
  const TemplateSource* tpl = catalog_.find(selection.template_name);
  const Operator* op = find_operator(selection.problem.op);
  if (!tpl || !op) {
    return Error::not_found("template '" + printable(selection.template_name) + "' is not known");
  }
  KF_TRY_ASSIGN(cfg, Config::parse(selection.config));
  const DeviceInfo& info = device_.info();
  KF_TRY_ASSIGN(inst, instantiate(*tpl, prelude_text(info.backend), *op, cfg, selection.problem,
                                  info.limits()));
  BuildInput input{device_, *tpl, inst, selection.problem, cfg};
  if (!selection.library_call.empty()) {
    KF_TRY_ASSIGN(parsed, parse_json_bounded(selection.library_call, "library_call of " + selection.template_name));
    input.stored_call = std::move(parsed);
  }
  const TemplateKind& kind = template_kind(*tpl);
  Hasher h;
  h.add(inst.source).add(inst.kernel_name).add(std::string_view());  // no compile options
  h.add(device_.compiler().name()).add(device_.compiler().version()).add(info.hardware_key());
  kind.add_identity(h, input);
  auto prepared = std::make_unique<PreparedKernel>();
  prepared->geometry = inst.geometry;
  prepared->binary_key = h.hex();
  prepared->arguments = op->arguments(selection.problem);

  Kernel* kernel = nullptr;
  {
    std::shared_lock read(kernel_mutex_);
    if (auto it = kernels_.find(prepared->binary_key); it != kernels_.end()) kernel = it->second.get();
  }
  std::unique_ptr<Kernel> loaded;
  if (kernel == nullptr) {
    CachedBinaries binaries(*this, *prepared);
    KF_TRY_ASSIGN(built, kind.build(input, binaries));
    prepared->origin = std::move(built.origin);
    loaded = std::move(built.kernel);
    kernel = loaded.get();
  } else {
    prepared->origin = KernelOrigin::kMemory;
  }
  prepared->kernel = kernel;
  std::unique_lock write(kernel_mutex_);
  if (loaded) {
    kernels_.emplace(prepared->binary_key, std::move(loaded));
    if (prepared->origin == KernelOrigin::kDisk) ++kernel_stats_.disk_hits;
    else ++kernel_stats_.compiles;
  } else {
    ++kernel_stats_.memory_hits;
  }
  return prepared_.emplace(std::move(key), std::move(prepared)).first->second.get();
}

void Lookup::open_binary_cache() {
  if (binary_cache_ || binary_cache_tried_) return;
  binary_cache_tried_ = true;
  std::string dir;
  {
    std::shared_lock read(kernel_mutex_);
    dir = binary_cache_dir_;
  }
  if (dir.empty()) return;
  auto cache = BinaryCache::open(dir);
  if (cache.ok()) {
    binary_cache_.emplace(std::move(*cache));
    return;
  }
  {
    std::unique_lock write(kernel_mutex_);
    binary_cache_dir_.clear();
  }
  std::lock_guard lock(select_mutex_);  // warned_ is the select path's
  warn_once("binary cache", cache.error().message + "; kernels are compiled without it");
}

Result<double> Lookup::launch(const Selection& selection, const std::vector<KernelArg>& args) {
  KF_TRY_ASSIGN(prepared, prepare(selection));
  KF_TRY(check_launch_arguments(selection.problem.op, prepared->arguments, args));
  std::lock_guard lock(launch_mutex_);
  return device_.launch(*prepared->kernel, args, prepared->geometry);
}

Result<double> Lookup::launch_named(const Selection& selection, const std::vector<NamedArg>& args) {
  KF_TRY_ASSIGN(prepared, prepare(selection));
  KF_TRY_ASSIGN(ordered, order_named_arguments(selection.problem.op, prepared->arguments, args));
  return launch(selection, ordered);
}

Status Lookup::enqueue(const Selection& selection, const std::vector<KernelArg>& args) {
  KF_TRY_ASSIGN(prepared, prepare(selection));
  KF_TRY(check_launch_arguments(selection.problem.op, prepared->arguments, args));
  std::lock_guard lock(launch_mutex_);
  return device_.enqueue(*prepared->kernel, args, prepared->geometry);
}

Status Lookup::enqueue_named(const Selection& selection, const std::vector<NamedArg>& args) {
  KF_TRY_ASSIGN(prepared, prepare(selection));
  KF_TRY_ASSIGN(ordered, order_named_arguments(selection.problem.op, prepared->arguments, args));
  return enqueue(selection, ordered);
}

Status Lookup::synchronize() { return device_.synchronize(); }

std::size_t Lookup::compiled_count() const {
  std::shared_lock read(kernel_mutex_);
  return kernels_.size();
}

KernelStats Lookup::kernel_stats() const {
  std::shared_lock read(kernel_mutex_);
  return kernel_stats_;
}

std::string Lookup::binary_cache_dir() const {
  std::shared_lock read(kernel_mutex_);
  return binary_cache_dir_;
}

}  // namespace kforge
