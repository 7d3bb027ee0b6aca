// `kforge lookup`: what the runtime library would select for a problem, and why.
#include "runtime/libraries/library_kernel.hpp"
#include "runtime/lookup/lookup.hpp"
#include "tools/commands.hpp"
#include "tuner/template_selection.hpp"

namespace kforge::cli {

namespace {

struct LookupFlags {
  std::string system_db;
  bool prepare = false;
  bool no_binary_cache = false;
  std::string library;  ///< compare, forbid or force; empty: $KFORGE_LIBRARY_<OP>
};

}  // namespace

void add_lookup_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("lookup", "Show which kernel the runtime selects for a problem on a device, and why");
  add_problem_flags(*cmd, o);
  add_db_flag(*cmd, o);
  add_device_flag(*cmd, o);
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  static LookupFlags flags;
  cmd->add_option("--system-db", flags.system_db,
                  "The shipped, read-only database, searched after --db (the user database)");
  cmd->add_flag("--prepare", flags.prepare,
                "Also get the launchable kernel: from memory, the binary cache or the compiler");
  cmd->add_flag("--no-binary-cache", flags.no_binary_cache,
                "With --prepare: compile without reading or writing the binary cache");
  cmd->add_option("--library", flags.library,
                  "Library candidates: compare (the faster entry wins), forbid (kernels only) or force "
                  "(libraries only); default: $KFORGE_LIBRARY_<OP>, else compare")
      ->check(CLI::IsMember({"compare", "forbid", "force"}));
  cmd->callback([&o] {
    TemplateCatalog catalog = make_catalog(o);  // first: it registers declared operators
    Problem problem = make_problem(o);
    auto device = open_device(o);
    LookupOptions options;
    options.user_db = o.db;
    options.system_db = flags.system_db;
    options.use_binary_cache = !flags.no_binary_cache;
    auto lookup = unwrap(Lookup::open(options, *device, std::move(catalog)));
    if (!flags.library.empty()) {
      unwrap(lookup->set_library_policy(problem.op, unwrap(library_policy_for(problem.op, flags.library))));
    }
    Selection s = unwrap(lookup->select(problem));
    const PreparedKernel* prepared = flags.prepare ? unwrap(lookup->prepare(s)) : nullptr;
    if (o.json) {
      nlohmann::json j = {{"template", s.template_name}, {"config", s.config},    {"rule", std::string(name(s.rule))},
                          {"problem", s.problem.key()},  {"device", device->info().name},
                          {"template_hash", s.template_hash}, {"explanation", s.explanation}};
      if (s.rule != SelectionRule::kDefault && s.rule != SelectionRule::kOverride) {
        j["tuned_problem"] = s.tuned_problem;
        j["tuned_median_ms"] = s.tuned_median_ms;
        j["database"] = s.database;
      }
      if (s.rule == SelectionRule::kNearest) j["distance"] = s.distance;
      if (!s.library_best.empty()) {
        j["vendor_comparison"] = {{"library_best", s.library_best},
                                  {"library_best_ms", s.library_best_ms},
                                  {"kernel_best", s.kernel_best},
                                  {"kernel_best_ms", s.kernel_best_ms}};
      }
      if (!s.library_call.empty())
        j["library_call"] = nlohmann::json::parse(s.library_call, nullptr, false);  // the stored choice
      if (prepared) {
        if (const auto* call = dynamic_cast<const LibraryKernel*>(prepared->kernel)) {
          if (nlohmann::json bound = call->call_identity(); !bound.is_null())
            j["library_call"] = std::move(bound);
        }
      }
      if (prepared) j["kernel"] = {{"origin", std::string(name(prepared->origin))}, {"cache_entry", prepared->cache_entry}};
      print_json(j);
      return;
    }
    std::cout << name(s.rule) << ": " << s.template_name << " " << s.config << "\n" << s.explanation;
    if (prepared) {
      std::cout << "kernel: "
                << (prepared->origin == KernelOrigin::kDisk ? "loaded from the binary cache" : name(prepared->origin));
      if (!prepared->cache_entry.empty()) std::cout << " (" << prepared->cache_entry << ")";
      std::cout << "\n";
    }
  });
}

}  // namespace kforge::cli
