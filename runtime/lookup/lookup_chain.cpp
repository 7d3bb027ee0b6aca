// The selection chain (rules and order: lookup.hpp): override, exact,
// nearest, same_arch, same_vendor, default. Runs under the select mutex.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/bounded_json.hpp"
#include "core/printable.hpp"
#include "runtime/lookup/lookup.hpp"
#include "runtime/lookup/lookup_source.hpp"

namespace kforge {

std::string_view name(SelectionRule rule) {
  switch (rule) {
    case SelectionRule::kOverride:
      return "override";
    case SelectionRule::kExact:
      return "exact";
    case SelectionRule::kNearest:
      return "nearest";
    case SelectionRule::kSameArch:
      return "same_arch";
    case SelectionRule::kSameVendor:
      return "same_vendor";
    case SelectionRule::kDefault:
      return "default";
  }
  return "default";
}

namespace {

constexpr double kNotComparable = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxNotesPerRule = 12;  ///< skip lines per rule in an explanation

std::string fmt_ms(double ms) {
  std::ostringstream s;
  s.precision(4);
  s << ms << " ms";
  return s.str();
}

/// Winners and devices of one database, for the problem's operator, dtype and layout.
struct Tuned {
  const LookupSource* source = nullptr;
  std::vector<WinnerRecord> winners;            ///< fastest first
  std::map<std::string, DeviceRecord> devices;  ///< by key
};

struct Candidate {
  const Tuned* tuned;
  std::size_t source_index;
  const WinnerRecord* winner;
  const DeviceRecord* device;
  double distance;
};

enum class Scope { kExact, kNearest, kSameArch, kSameVendor };

struct Rule {
  Scope scope;
  SelectionRule rule;
  const char* none;  ///< the explanation line when nothing fits
};

constexpr Rule kRules[] = {
    {Scope::kExact, SelectionRule::kExact, "no usable entry for this problem on this device"},
    {Scope::kNearest, SelectionRule::kNearest, "no usable tuned problem on this device"},
    {Scope::kSameArch, SelectionRule::kSameArch, "no usable entry from another device of this architecture"},
    {Scope::kSameVendor, SelectionRule::kSameVendor, "no usable entry from another device of this vendor"},
};

bool in_scope(Scope scope, const DeviceInfo& me, const std::string& my_key, const DeviceRecord& d,
              bool same_problem) {
  switch (scope) {
    case Scope::kExact:
      return d.key == my_key && same_problem;
    case Scope::kNearest:
      return d.key == my_key && !same_problem;
    case Scope::kSameArch:
      return d.key != my_key && d.backend == me.backend && !me.arch.empty() && d.arch == me.arch;
    case Scope::kSameVendor:
      return d.key != my_key && d.backend == me.backend && !me.vendor.empty() && d.vendor == me.vendor &&
             d.arch != me.arch;
  }
  return false;
}

/// One walk of the chain for one problem: each rule a step that either
/// selects or adds its lines to the explanation.
class ChainWalk {
 public:
  using Warn = std::function<void(const std::string& key, const std::string& message)>;

  ChainWalk(Problem problem, const Operator& op, const DeviceInfo& info, const EntryChecker& checker,
            Warn warn, LibraryPolicy policy, std::string policy_origin)
      : policy_(policy),
        policy_origin_(std::move(policy_origin)),
        problem_(std::move(problem)),
        op_(op),
        info_(info),
        checker_(checker),
        warn_(std::move(warn)),
        my_key_(info.hardware_key()),
        key_(problem_.key()) {
    selection_.problem = problem_;
  }

  /// 1. The override of the problem's operator, when one is set and usable.
  std::optional<Selection> try_override(const std::string& template_name, const std::string& config,
                                        const std::string& origin, const std::string& error);
  void no_override() { why_ << "override: none for " << problem_.op << "\n"; }
  /// The winners and devices of every database, for the problem's operator, dtype and layout.
  Result<std::vector<Tuned>> read_databases(const std::vector<std::unique_ptr<LookupSource>>& sources);
  /// The winners of the problem's family, with their distances, computed once.
  std::vector<Candidate> comparable(const std::vector<Tuned>& tuned);
  /// 2-5. The first usable candidate in `rule`'s scope, nearest first.
  std::optional<Selection> try_rule(const Rule& rule, const std::vector<Candidate>& all);
  /// 6. The first usable default, built-in templates first.
  std::optional<Selection> try_default(const TemplateCatalog& catalog);
  Error nothing_fits() const {
    return Error{ErrorCode::kUnsupported, "no template can run " + key_ + " on " + info_.name, why_.str()};
  }

 private:
  /// Notes a skipped candidate; stale and invalid entries also warn, once each.
  void skipped(bool note, const std::string& what, const std::string& origin, const EntryCheck& c,
               const std::string& template_name, const std::string& hash, const std::string& config);
  /// Notes and warns (once) of a winner that disagrees with its result row.
  void disagrees(bool note, SelectionRule rule, const Candidate& c);
  Selection chosen(SelectionRule rule, const std::string& template_name, const std::string& hash,
                   const std::string& config) {
    selection_.rule = rule;
    selection_.template_name = template_name;
    selection_.template_hash = hash;
    selection_.config = config;
    selection_.explanation = why_.str();
    return selection_;
  }

  /// Whether the policy admits an entry's template; notes why not.
  bool admitted(const TemplateSource& tpl, bool note, const std::string& what);
  /// The fastest usable library entry and kernel entry among `cands`, into
  /// the selection and, when both exist, an explanation line with their ratio.
  void compare_kinds(const std::vector<const Candidate*>& cands);

  LibraryPolicy policy_;
  std::string policy_origin_;
  Problem problem_;
  const Operator& op_;
  const DeviceInfo& info_;
  const EntryChecker& checker_;
  Warn warn_;
  const std::string my_key_, key_;
  std::ostringstream why_;
  Selection selection_;
};

void ChainWalk::skipped(bool note, const std::string& what, const std::string& origin, const EntryCheck& c,
                        const std::string& template_name, const std::string& hash,
                        const std::string& config) {
  if (note) why_ << "  skipped " << what << ": " << c.reason << "\n";
  if (c.verdict == EntryVerdict::kStale) {
    warn_("stale\n" + origin + "\n" + template_name + "\n" + hash,
          origin + ": entries of template " + template_name + " tuned under hash " + hash +
              " are stale (the template changed since; current hash " + checker_.current_hash(template_name) +
              ") and are ignored; retune to refresh them");
  } else if (c.verdict == EntryVerdict::kInvalid || c.verdict == EntryVerdict::kUnknownTemplate) {
    warn_("invalid\n" + origin + "\n" + template_name + "\n" + config,
          origin + ": ignoring an entry of template " + printable(template_name) + ": " + c.reason);
  }
}

void ChainWalk::disagrees(bool note, SelectionRule rule, const Candidate& c) {
  const WinnerRecord& w = *c.winner;
  const std::string& origin = c.tuned->source->path;
  const std::string what = "winner " + w.template_name + " " + printable(w.config) + " (tuned on " +
                           c.device->name + " for " + w.problem_key + ")";
  if (note) why_ << "  skipped " << name(rule) << " candidate " << what << ": " << w.disagreement << "\n";
  warn_("disagrees\n" + origin + "\n" + std::to_string(w.result_id) + "\n" + w.config,
        origin + ": ignoring " + what + ": " + w.disagreement);
}

std::optional<Selection> ChainWalk::try_override(const std::string& template_name, const std::string& config,
                                                 const std::string& origin, const std::string& error) {
  if (!error.empty()) {
    why_ << "override: ignored: " << error << "\n";
    return std::nullopt;
  }
  EntryCheck c = checker_.check(template_name, "", config, problem_, op_);
  if (c.usable()) {
    why_ << "override: " << template_name << " " << config << " from " << origin << "\n";
    return chosen(SelectionRule::kOverride, template_name, checker_.current_hash(template_name), config);
  }
  why_ << "override: " << template_name << " " << printable(config) << " from " << origin
       << " cannot run this problem: " << c.reason << "\n";
  warn_("override\n" + origin + "\n" + key_, "override " + template_name + " " + printable(config) +
                                                 " from " + origin + " cannot run " + key_ + " (" + c.reason +
                                                 "); using the selection chain");
  return std::nullopt;
}

Result<std::vector<Tuned>> ChainWalk::read_databases(
    const std::vector<std::unique_ptr<LookupSource>>& sources) {
  std::vector<Tuned> tuned;
  for (const auto& source : sources) {
    if (!source->db) {
      why_ << "database: " << source->note << "\n";
      continue;
    }
    why_ << "database: " << source->role << " " << source->path << " (" << source->access << ")\n";
    Tuned t;
    t.source = source.get();
    Database::WinnerFilter f;
    f.op = problem_.op;
    f.dtype = std::string(dtype_name(problem_.dtype));
    f.layout = problem_.layout.name();
    KF_TRY_ASSIGN(winners, source->db->winners(f));
    KF_TRY_ASSIGN(devices, source->db->devices());
    t.winners = std::move(winners);
    for (auto& d : devices) t.devices.emplace(d.key, std::move(d));
    tuned.push_back(std::move(t));
  }
  if (sources.empty()) why_ << "database: none given\n";
  return tuned;
}

std::vector<Candidate> ChainWalk::comparable(const std::vector<Tuned>& tuned) {
  const std::string my_family = problem_family(key_);
  std::vector<Candidate> all;
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    for (const auto& w : tuned[i].winners) {
      if (problem_family(w.problem_key) != my_family) continue;
      auto dev = tuned[i].devices.find(w.device_key);
      if (dev == tuned[i].devices.end()) continue;
      double d = 0;
      if (w.problem_key != key_) {
        try {
          d = dims_log2_distance(problem_.dims, parse_json_bounded(w.dims_json, "problems.dims_json")
                                                    .value()
                                                    .get<std::map<std::string, std::int64_t>>());
        } catch (const std::exception&) {
          why_ << "  skipped an entry of " << tuned[i].source->path << " with unreadable dims '"
               << printable(w.dims_json) << "'\n";
          continue;
        }
        if (d == kNotComparable) continue;
      }
      all.push_back({&tuned[i], i, &w, &dev->second, d});
    }
  }
  return all;
}

std::optional<Selection> ChainWalk::try_rule(const Rule& rule, const std::vector<Candidate>& all) {
  std::vector<const Candidate*> cands;
  for (const auto& c : all) {
    if (in_scope(rule.scope, info_, my_key_, *c.device, c.winner->problem_key == key_)) cands.push_back(&c);
  }
  std::stable_sort(cands.begin(), cands.end(), [](const Candidate* a, const Candidate* b) {
    if (a->distance != b->distance) return a->distance < b->distance;
    if (a->source_index != b->source_index) return a->source_index < b->source_index;
    return a->winner->median_ms < b->winner->median_ms;
  });
  std::size_t notes = 0;
  for (const Candidate* c : cands) {
    const WinnerRecord& w = *c->winner;
    const std::string& origin = c->tuned->source->path;
    EntryCheck check = checker_.check(w.template_name, w.template_hash, w.config, problem_, op_);
    if (!check.usable()) {
      // Explanations stay readable: past a few lines only a count is kept
      // (warnings still go out, once per entry).
      skipped(++notes <= kMaxNotesPerRule,
              std::string(name(rule.rule)) + " candidate " + w.template_name + " " + printable(w.config) +
                  " (tuned on " + c->device->name + " for " + w.problem_key + ", " + c->tuned->source->role +
                  " database " + origin + ")",
              origin, check, w.template_name, w.template_hash, w.config);
      continue;
    }
    if (!w.disagreement.empty()) {
      disagrees(++notes <= kMaxNotesPerRule, rule.rule, *c);
      continue;
    }
    if (!admitted(*check.tpl, notes < kMaxNotesPerRule,
                  std::string(name(rule.rule)) + " candidate " + w.template_name + " " + printable(w.config))) {
      ++notes;
      continue;
    }
    if (notes > kMaxNotesPerRule) why_ << "  ... and " << notes - kMaxNotesPerRule << " more skipped\n";
    if (rule.scope == Scope::kExact) compare_kinds(cands);
    selection_.tuned_problem = w.problem_key;
    selection_.tuned_device = c->device->name;
    selection_.database = origin;
    selection_.tuned_median_ms = w.median_ms;
    selection_.distance = c->distance;
    selection_.library_call = w.library_call;
    selection_.online = w.online;
    selection_.tune_unfinished = w.sweep_unfinished;
    why_ << name(rule.rule) << ": " << w.template_name << " " << w.config << " tuned on "
         << (c->device->key == my_key_ ? "this device (" + info_.name + ")"
                                       : c->device->name + " (" + c->device->arch + ")")
         << " for " << w.problem_key;
    if (c->distance > 0) why_ << " (log2 distance " << c->distance << ")";
    why_ << ", median " << fmt_ms(w.median_ms) << ", from the " << c->tuned->source->role << " database "
         << origin << "\n";
    if (!w.online.empty()) why_ << "  tuned online (" << w.online << ") by a program's lookup\n";
    if (w.sweep_unfinished) why_ << "  its tuning run has not finished (running, stopped or killed)\n";
    return chosen(rule.rule, w.template_name, w.template_hash, w.config);
  }
  if (notes > kMaxNotesPerRule) why_ << "  ... and " << notes - kMaxNotesPerRule << " more skipped\n";
  why_ << name(rule.rule) << ": " << rule.none << "\n";
  return std::nullopt;
}

bool ChainWalk::admitted(const TemplateSource& tpl, bool note, const std::string& what) {
  if (policy_admits(policy_, tpl.manifest)) return true;
  if (note) {
    why_ << "  skipped " << what << ": library candidates are "
         << (policy_ == LibraryPolicy::kForce ? "forced" : "forbidden") << " for " << problem_.op << " ("
         << policy_origin_ << ")\n";
  }
  return false;
}

void ChainWalk::compare_kinds(const std::vector<const Candidate*>& cands) {
  const WinnerRecord* best[2] = {nullptr, nullptr};  // kernel, library
  for (const Candidate* c : cands) {
    const WinnerRecord& w = *c->winner;
    if (!w.disagreement.empty()) continue;
    EntryCheck check = checker_.check(w.template_name, w.template_hash, w.config, problem_, op_);
    if (!check.usable()) continue;
    const WinnerRecord*& slot = best[check.tpl->manifest.is_library() ? 1 : 0];
    if (slot == nullptr || w.median_ms < slot->median_ms) slot = &w;
  }
  if (!best[0] || !best[1]) return;
  selection_.kernel_best = best[0]->template_name + " " + best[0]->config;
  selection_.library_best = best[1]->template_name + " " + best[1]->config;
  selection_.kernel_best_ms = best[0]->median_ms;
  selection_.library_best_ms = best[1]->median_ms;
  const bool library_faster = best[1]->median_ms < best[0]->median_ms;
  const WinnerRecord& fast = *best[library_faster ? 1 : 0];
  const WinnerRecord& slow = *best[library_faster ? 0 : 1];
  std::ostringstream ratio;
  ratio.precision(3);
  ratio << (fast.median_ms > 0 ? slow.median_ms / fast.median_ms : 0.0);
  why_ << "compared: " << (library_faster ? "library " : "kernel ") << fast.template_name << " "
       << fast.config << " (" << fmt_ms(fast.median_ms) << ") is " << ratio.str() << "x faster than "
       << (library_faster ? "kernel " : "library ") << slow.template_name << " " << slow.config << " ("
       << fmt_ms(slow.median_ms) << ") here\n";
}

std::optional<Selection> ChainWalk::try_default(const TemplateCatalog& catalog) {
  auto candidates = catalog.for_op(problem_.op, info_.backend);
  // A library is a default only where it is forced: without a tuning
  // result the kernels' defaults come first.
  std::erase_if(candidates, [&](const TemplateSource* t) {
    return policy_ == LibraryPolicy::kForce ? !t->manifest.is_library() : t->manifest.is_library();
  });
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const TemplateSource* t) { return t->origin.rfind("builtin:", 0) == 0; });
  for (const TemplateSource* tpl : candidates) {
    const std::string def = tpl->manifest.default_config().canonical_name();
    EntryCheck c = checker_.check(tpl->manifest.name, "", def, problem_, op_);
    if (!c.usable()) {
      why_ << "  default of " << tpl->manifest.name << " skipped: " << c.reason << "\n";
      continue;
    }
    why_ << "default: " << tpl->manifest.name << " " << def << ", the template's default configuration\n";
    return chosen(SelectionRule::kDefault, tpl->manifest.name, checker_.current_hash(tpl->manifest.name), def);
  }
  return std::nullopt;
}

}  // namespace

Result<Selection> Lookup::select_uncached(const Problem& requested) {
  const Operator* op = find_operator(requested.op);
  if (!op) return Error::bad_input("unknown operator '" + printable(requested.op) + "'");
  KF_TRY_ASSIGN(problem, op->normalize(requested));
  const auto policy = policies_.find(problem.op);
  ChainWalk walk(
      problem, *op, device_.info(), checker_,
      [this](const std::string& key, const std::string& message) { warn_once(key, message); },
      policy == policies_.end() ? LibraryPolicy::kCompare : policy->second.policy,
      policy == policies_.end() ? "" : policy->second.origin);
  if (auto it = overrides_.find(problem.op); it == overrides_.end()) {
    walk.no_override();
  } else if (auto sel = walk.try_override(it->second.template_name, it->second.config, it->second.origin,
                                          it->second.error)) {
    return *sel;
  }
  KF_TRY_ASSIGN(tuned, walk.read_databases(sources_));
  const std::vector<Candidate> all = walk.comparable(tuned);
  for (const Rule& rule : kRules) {
    if (tuned.empty()) break;
    if (auto sel = walk.try_rule(rule, all)) return *sel;
  }
  if (auto sel = walk.try_default(catalog_)) return *sel;
  return walk.nothing_fits();
}

}  // namespace kforge
