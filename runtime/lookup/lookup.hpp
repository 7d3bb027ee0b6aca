// The runtime lookup: select(problem) walks a fallback chain over a user and
// a system tuning database, then compiles the chosen kernel once and
// launches it. docs/runtime.md describes it for users.
//
// Chain, in order; every step is recorded in Selection::explanation:
//   override     set_override(), or KFORGE_OVERRIDE_<OP>=template:config
//                (read when the lookup opens; <OP> is the operator's name in
//                upper case, e.g. KFORGE_OVERRIDE_GEMM)
//   exact        a winner tuned on this device for this very problem
//   nearest      the winner of the closest tuned problem on this device
//   same_arch    a winner tuned on another device of the same backend and
//                architecture (another sm_90 part), closest problem first
//   same_vendor  a winner tuned on a device of the same backend and vendor
//                but another architecture, closest problem first
//   default      the default configuration of the first template that can
//                run the problem, built-in templates before user ones, then
//                by name
// Problems are comparable when operator, dtype, layout and everything else
// in the key but the dims agree. Their distance is the sum over dims of
// |log2(a) - log2(b)| (a dim missing on one side: not comparable). Within a
// rule, candidates go by distance, then the user database before the system
// one, then the faster winner.
//
// Every candidate, override included, passes EntryChecker (entry_check.hpp)
// or is skipped with a note and the next one tried: an unknown template; a
// stale entry (template hash changed since tuning); an invalid entry (a
// configuration the template does not declare: a tampered database); a
// template that does not target the backend or whose architecture guard
// fails; a dtype, layout, constraint or envelope the problem does not meet.
// Stale, invalid and rejected override entries also raise a warning, once
// per lookup for each distinct entry.
//
// Kernels: prepare() looks in memory (this lookup's kernels), then in the
// on-disk binary cache shared with the tuner (binary_cache.hpp, the same
// make_cache_key, so kernels `kforge tune` compiled are hits), then
// compiles and stores the binary there. A corrupt entry is a miss: it is
// compiled again and replaced.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/database.hpp"
#include "generator/operator.hpp"
#include "generator/problem.hpp"
#include "runtime/catalog/entry_check.hpp"
#include "runtime/catalog/template_catalog.hpp"
#include "runtime/device/backend.hpp"
#include "runtime/kinds/binary_cache.hpp"
#include "runtime/kinds/kernel_origin.hpp"
#include "runtime/libraries/library_policy.hpp"
#include "runtime/lookup/named_arguments.hpp"
#include "runtime/lookup/online_tuning.hpp"
#include "runtime/lookup/selection_cache.hpp"

namespace kforge {

struct LookupSource;  // one opened database (lookup_source.hpp)

/// The rule of the chain that chose a selection, in the chain's order.
enum class SelectionRule { kOverride, kExact, kNearest, kSameArch, kSameVendor, kDefault };
/// "override", "exact", "nearest", "same_arch", "same_vendor" or "default":
/// the rule's word in explanations, `kforge lookup`, the C API and Python.
std::string_view name(SelectionRule rule);

struct Selection {
  SelectionRule rule = SelectionRule::kDefault;
  std::string template_name;
  std::string template_hash;  ///< the template's current hash on this backend
  std::string config;
  Problem problem;             ///< the problem selected for (normalized)
  std::string tuned_problem;   ///< database rules: key of the problem the entry was tuned on
  std::string tuned_device;    ///< database rules: name of the device it was tuned on
  std::string database;        ///< database rules: the file the entry came from
  double tuned_median_ms = 0;  ///< database rules: its median time there
  double distance = 0;         ///< log2 distance to the tuned problem (0 when the same)
  /// Database rules, where this problem was tuned here with both library
  /// candidates and kernels: the fastest usable entry of each
  /// ("gemm_clblast BATCHED0") and its median; empty and 0 otherwise.
  std::string library_best, kernel_best;
  double library_best_ms = 0, kernel_best_ms = 0;
  /// Database rules, a library entry: what its tune stored of the call
  /// (JSON text, LibraryKernel::call_identity), which prepare() replays;
  /// "" where nothing was stored.
  std::string library_call;
  /// Database rules: "background" or "blocking" when the entry was tuned
  /// online by a program's lookup; "" otherwise.
  std::string online;
  /// Database rules: the run that tuned the entry never finished (stopped
  /// or killed); with online tuning on, an exact one is resumed.
  bool tune_unfinished = false;
  std::string explanation;     ///< every step tried, one per line
};

struct LookupOptions {
  /// Searched first, like the head of a search path. A path that does not
  /// exist is not an error (explain says so); "" means none.
  std::string user_db;
  /// The read-only database shipped with a program or installation.
  std::string system_db;
  /// Receives each warning once per lookup (stale or invalid entries,
  /// rejected overrides). Default: one line on stderr, "kforge: warning: ...".
  std::function<void(const std::string&)> on_warning;
  /// Read KFORGE_OVERRIDE_<OP> and KFORGE_LIBRARY_<OP> from the environment when opening.
  bool env_overrides = true;
  /// Directory of the on-disk binary cache; "" means BinaryCache::default_dir()
  /// ($KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge/binaries, else
  /// $HOME/.cache/kforge/binaries). Opened at the first prepare(); a
  /// directory that cannot be created or written is then a warning, and the
  /// lookup compiles without it.
  std::string binary_cache_dir;
  /// false: the disk cache is neither read nor written; each kernel is
  /// compiled once per lookup.
  bool use_binary_cache = true;
  /// Tuning on a miss (online_tuning.hpp); off unless set here or by
  /// KFORGE_ONLINE_TUNING (read with the other variables when
  /// env_overrides is on). Needs user_db, where the results land.
  OnlineTuningOptions online;
};

/// A kernel ready to launch: owned by the lookup, valid while it lives.
struct PreparedKernel {
  Kernel* kernel = nullptr;
  LaunchGeometry geometry;
  std::string binary_key;  ///< hash of what was compiled (source, compiler, options, device)
  /// Where the binary came from when it was first needed: kMemory (loaded
  /// already for another problem), kDisk (the binary cache), kCompiled, or
  /// kLibrary (a library template's call, bound: no binary).
  KernelOrigin origin = KernelOrigin::kCompiled;
  /// Its entry in the binary cache; "" when the cache is off.
  std::string cache_entry;
  /// The operator's arguments for the selection's problem, which every
  /// launch is checked against (Operator::arguments).
  std::vector<ArgumentSpec> arguments;
};

/// What prepare() has done so far, per distinct binary.
struct KernelStats {
  std::int64_t memory_hits = 0;   ///< binaries already loaded by this lookup
  std::int64_t disk_hits = 0;     ///< binaries loaded from the disk cache
  std::int64_t compiles = 0;      ///< binaries compiled (and stored in the disk cache)
  std::int64_t disk_corrupt = 0;  ///< disk entries found damaged (removed, compiled again)
  std::int64_t disk_load_failures = 0;  ///< disk hits the device refused (compiled again)
};

class Lookup {
 public:
  /// One database, opened read-only. A missing file is not an error: only
  /// the default rule (and overrides) can fire, and explain says why. A
  /// corrupt file, or one from another schema version, is an error.
  static Result<std::unique_ptr<Lookup>> open(const std::string& db_path, Device& device,
                                              TemplateCatalog catalog);
  /// A user and a system database, both opened read-only (either may be
  /// missing). A malformed environment override is a warning, not an error.
  static Result<std::unique_ptr<Lookup>> open(const LookupOptions& options, Device& device,
                                              TemplateCatalog catalog);
  ~Lookup();
  Lookup(const Lookup&) = delete;
  Lookup& operator=(const Lookup&) = delete;

  /// The selection for `problem`. Cached per problem as written: a repeated
  /// call takes no lock and allocates nothing. The pointer stays valid for
  /// the lookup's lifetime. Safe from many threads at once.
  Result<const Selection*> select_ref(const Problem& problem);
  /// select_ref, copied out.
  Result<Selection> select(const Problem& problem);

  /// Makes `template_name` with `config` the first rule for operator `op`
  /// (replacing an environment override) and forgets cached selections.
  /// The template must exist and implement `op`, and `config` must be
  /// declared by it (kBadInput otherwise); whether it fits a given problem
  /// is checked at select time, where a misfit falls through to the chain.
  Status set_override(std::string_view op, std::string_view template_name, std::string_view config);
  void clear_override(std::string_view op);
  /// Whether library candidates take part for operator `op`: compared with
  /// kernels (the default), forbidden (kernels only) or forced (libraries
  /// only, their default configuration where none was tuned). Replaces what
  /// KFORGE_LIBRARY_<OP> said and forgets cached selections.
  Status set_library_policy(std::string_view op, LibraryPolicy policy);

  /// Generates, compiles and loads the selected kernel once. Identical
  /// sources share one compiled kernel across problems; the launch geometry
  /// is per problem. The configuration is checked again here, so a
  /// hand-made Selection cannot inject code either.
  Result<const PreparedKernel*> prepare(const Selection& selection);
  /// prepare, then enqueues the kernel with the operator's argument list
  /// where this thread's launches go (the device's queue or stream, or the
  /// caller's stream in use: ForeignMemory) and returns without waiting, as
  /// a CUDA launch does. The arguments are checked against the operator's
  /// contract for the selected problem first (launch_arguments.hpp): a
  /// wrong count, a scalar of the wrong kind or value, or a buffer smaller
  /// than its tensor is kBadInput naming the argument, and nothing is
  /// enqueued. Reading a buffer back (Device::read) waits for the kernels
  /// enqueued before; synchronize() waits for all. Enqueues are serialized.
  Status enqueue(const Selection& selection, const std::vector<KernelArg>& args);
  /// enqueue with the arguments given by name in any order (a declared
  /// operator's names from its operator.json); a name the operator lacks,
  /// one given twice or one left out is kBadInput naming it.
  Status enqueue_named(const Selection& selection, const std::vector<NamedArg>& args);
  /// Waits for every kernel enqueued on the lookup's device.
  Status synchronize();
  /// A measurement: enqueue between two device events, then wait; the
  /// kernel's device time in ms. Checks as enqueue does.
  Result<double> launch(const Selection& selection, const std::vector<KernelArg>& args);
  /// launch with the arguments given by name (as enqueue_named).
  Result<double> launch_named(const Selection& selection, const std::vector<NamedArg>& args);

  /// Switches online tuning on (or off: OnlineMode::kOff) for this lookup
  /// and forgets cached selections; a tune running under the previous
  /// options is stopped. kBadInput without a user database.
  Status set_online_tuning(const OnlineTuningOptions& options);
  /// Waits until no online tune is queued or running; false after
  /// `timeout_s` (true at once when online tuning is off).
  bool wait_online_idle(double timeout_s);

  Device& device() { return device_; }
  /// Kernels loaded by this lookup so far, compiled or from the disk cache
  /// (for tests and benchmarks).
  std::size_t compiled_count() const;
  KernelStats kernel_stats() const;
  /// The binary cache's directory; "" when it is off, or when the first
  /// prepare() could not open it (the cache is opened, and its directory
  /// created, only when a kernel is first needed).
  std::string binary_cache_dir() const;

 private:
  struct Override {
    std::string template_name, config;
    std::string origin;  ///< "set_override" or the environment variable's name
    std::string error;   ///< why it was rejected when read; empty when well formed
  };
  Lookup(std::vector<std::unique_ptr<LookupSource>> sources, Device& device, TemplateCatalog catalog,
         std::function<void(const std::string&)> on_warning);
  /// The binaries prepare() builds from: the disk cache when it has them,
  /// else compiled (and stored). Used under compile_mutex_.
  class CachedBinaries;
  /// Opens the binary cache at the first build that needs it; a cache that
  /// cannot be opened is a warning, and kernels are compiled without it.
  void open_binary_cache();
  void read_env_overrides();
  void read_env_policies();
  Result<Selection> select_uncached(const Problem& requested);  // lookup_chain.cpp
  /// `sel` for a miss with online tuning on: tuned first (blocking) or
  /// queued (background), its explanation saying which. Under select_mutex_.
  Result<Selection> answer_online(const Problem& requested, Selection sel);
  /// Opens the user database where it did not exist when the lookup opened
  /// (an online tune created it). Under select_mutex_.
  void refresh_user_source();
  /// Sends `message` to on_warning unless the same `key` was warned before.
  void warn_once(const std::string& key, const std::string& message);

  std::vector<std::unique_ptr<LookupSource>> sources_;  ///< user first, then system
  Device& device_;
  TemplateCatalog catalog_;
  EntryChecker checker_;
  std::function<void(const std::string&)> on_warning_;
  SelectionCache cache_;

  std::mutex select_mutex_;  ///< the slow path: databases, overrides, warnings
  std::map<std::string, Override, std::less<>> overrides_;  ///< by operator
  struct Policy {
    LibraryPolicy policy = LibraryPolicy::kCompare;
    std::string origin;  ///< "set_library_policy" or the environment variable's name
  };
  std::map<std::string, Policy, std::less<>> policies_;  ///< by operator; absent: compare
  std::set<std::string> warned_;

  mutable std::shared_mutex kernel_mutex_;
  std::unordered_map<std::string, std::unique_ptr<PreparedKernel>> prepared_;  ///< by selection
  std::unordered_map<std::string, std::unique_ptr<Kernel>> kernels_;           ///< by binary key
  std::mutex compile_mutex_;
  std::mutex launch_mutex_;
  std::optional<BinaryCache> binary_cache_;  ///< opened at the first prepare; under compile_mutex_
  bool binary_cache_tried_ = false;          ///< under compile_mutex_
  std::string binary_cache_dir_;             ///< under kernel_mutex_
  KernelStats kernel_stats_;  ///< under kernel_mutex_
  /// Last: destroyed first, so a running tune is stopped before the rest goes.
  std::shared_ptr<OnlineTuner> online_;  ///< null while off; replaced under select_mutex_
};

}  // namespace kforge
