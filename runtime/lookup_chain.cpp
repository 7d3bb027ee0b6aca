// The selection chain (rules and order: lookup.hpp): override, exact,
// nearest, same_arch, same_vendor, default. Runs under the select mutex.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bounded_json.hpp"
#include "lookup.hpp"
#include "lookup_source.hpp"
#include "printable.hpp"

namespace kforge {

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
  std::vector<WinnerRecord> winners;  ///< fastest first
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
  const char* name;
  const char* none;  ///< the explanation line when nothing fits
};

constexpr Rule kRules[] = {
    {Scope::kExact, "exact", "no usable entry for this problem on this device"},
    {Scope::kNearest, "nearest", "no usable tuned problem on this device"},
    {Scope::kSameArch, "same_arch", "no usable entry from another device of this architecture"},
    {Scope::kSameVendor, "same_vendor", "no usable entry from another device of this vendor"},
};

bool in_scope(Scope scope, const DeviceInfo& me, const std::string& my_key, const DeviceRecord& d,
              bool same_problem) {
  switch (scope) {
    case Scope::kExact: return d.key == my_key && same_problem;
    case Scope::kNearest: return d.key == my_key && !same_problem;
    case Scope::kSameArch:
      return d.key != my_key && d.backend == me.backend && !me.arch.empty() && d.arch == me.arch;
    case Scope::kSameVendor:
      return d.key != my_key && d.backend == me.backend && !me.vendor.empty() &&
             d.vendor == me.vendor && d.arch != me.arch;
  }
  return false;
}

}  // namespace

Result<Selection> Lookup::select_uncached(const Problem& requested) {
  const Operator* op = find_operator(requested.op);
  if (!op) return Error::bad_input("unknown operator '" + printable(requested.op) + "'");
  KF_TRY_ASSIGN(problem, op->normalize(requested));
  const DeviceInfo& info = device_.info();
  const std::string my_key = info.hardware_key();
  const std::string key = problem.key();
  const std::string my_family = problem_family(key);
  std::ostringstream why;
  Selection sel;
  sel.problem = problem;

  // Notes a skipped candidate; stale and invalid entries also warn, once each.
  auto skipped = [&](bool note, const std::string& what, const std::string& origin,
                     const EntryCheck& c, const std::string& template_name,
                     const std::string& hash, const std::string& config) {
    if (note) why << "  skipped " << what << ": " << c.reason << "\n";
    if (c.verdict == EntryVerdict::kStale) {
      warn_once("stale\n" + origin + "\n" + template_name + "\n" + hash,
                origin + ": entries of template " + template_name + " tuned under hash " + hash +
                    " are stale (the template changed since; current hash " +
                    checker_.current_hash(template_name) + ") and are ignored; retune to refresh them");
    } else if (c.verdict == EntryVerdict::kInvalid || c.verdict == EntryVerdict::kUnknownTemplate) {
      warn_once("invalid\n" + origin + "\n" + template_name + "\n" + config,
                origin + ": ignoring an entry of template " + printable(template_name) + ": " +
                    c.reason);
    }
  };

  // 1. Override.
  if (auto it = overrides_.find(problem.op); it == overrides_.end()) {
    why << "override: none for " << problem.op << "\n";
  } else if (const Override& o = it->second; !o.error.empty()) {
    why << "override: ignored: " << o.error << "\n";
  } else {
    EntryCheck c = checker_.check(o.template_name, "", o.config, problem, *op);
    if (c.usable()) {
      sel.rule = "override";
      sel.template_name = o.template_name;
      sel.template_hash = checker_.current_hash(o.template_name);
      sel.config = o.config;
      why << "override: " << o.template_name << " " << o.config << " from " << o.origin << "\n";
      sel.explanation = why.str();
      return sel;
    }
    why << "override: " << o.template_name << " " << printable(o.config) << " from " << o.origin
        << " cannot run this problem: " << c.reason << "\n";
    warn_once("override\n" + o.origin + "\n" + key,
              "override " + o.template_name + " " + printable(o.config) + " from " + o.origin +
                  " cannot run " + key + " (" + c.reason + "); using the selection chain");
  }

  // 2-5. The database rules.
  std::vector<Tuned> tuned;
  for (const auto& source : sources_) {
    if (!source->db) {
      why << "database: " << source->note << "\n";
      continue;
    }
    why << "database: " << source->role << " " << source->path << " (" << source->access << ")\n";
    Tuned t;
    t.source = source.get();
    Database::WinnerFilter f;
    f.op = problem.op;
    f.dtype = std::string(dtype_name(problem.dtype));
    f.layout = problem.layout.name();
    KF_TRY_ASSIGN(winners, source->db->winners(f));
    KF_TRY_ASSIGN(devices, source->db->devices());
    t.winners = std::move(winners);
    for (auto& d : devices) t.devices.emplace(d.key, std::move(d));
    tuned.push_back(std::move(t));
  }
  if (sources_.empty()) why << "database: none given\n";

  // Comparable candidates with their distances, computed once.
  std::vector<Candidate> all;
  for (std::size_t i = 0; i < tuned.size(); ++i) {
    for (const auto& w : tuned[i].winners) {
      if (problem_family(w.problem_key) != my_family) continue;
      auto dev = tuned[i].devices.find(w.device_key);
      if (dev == tuned[i].devices.end()) continue;
      double d = 0;
      if (w.problem_key != key) {
        try {
          d = dims_log2_distance(problem.dims,
                                 parse_json_bounded(w.dims_json, "problems.dims_json")
                                     .value()
                                     .get<std::map<std::string, std::int64_t>>());
        } catch (const std::exception&) {
          why << "  skipped an entry of " << tuned[i].source->path << " with unreadable dims '"
              << printable(w.dims_json) << "'\n";
          continue;
        }
        if (d == kNotComparable) continue;
      }
      all.push_back({&tuned[i], i, &w, &dev->second, d});
    }
  }

  for (const Rule& rule : kRules) {
    if (tuned.empty()) break;
    std::vector<const Candidate*> cands;
    for (const auto& c : all) {
      if (in_scope(rule.scope, info, my_key, *c.device, c.winner->problem_key == key)) {
        cands.push_back(&c);
      }
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
      EntryCheck check = checker_.check(w.template_name, w.template_hash, w.config, problem, *op);
      if (!check.usable()) {
        // Explanations stay readable: past a few lines only a count is kept
        // (warnings still go out, once per entry).
        skipped(++notes <= kMaxNotesPerRule, rule.name + std::string(" candidate ") + w.template_name + " " + printable(w.config) +
                    " (tuned on " + c->device->name + " for " + w.problem_key + ", " +
                    c->tuned->source->role + " database " + origin + ")",
                origin, check, w.template_name, w.template_hash, w.config);
        continue;
      }
      if (notes > kMaxNotesPerRule) {
        why << "  ... and " << notes - kMaxNotesPerRule << " more skipped\n";
      }
      sel.rule = rule.name;
      sel.template_name = w.template_name;
      sel.template_hash = w.template_hash;
      sel.config = w.config;
      sel.tuned_problem = w.problem_key;
      sel.tuned_device = c->device->name;
      sel.database = origin;
      sel.tuned_median_ms = w.median_ms;
      sel.distance = c->distance;
      why << rule.name << ": " << w.template_name << " " << w.config << " tuned on "
          << (c->device->key == my_key ? "this device (" + info.name + ")" : c->device->name + " (" + c->device->arch + ")")
          << " for " << w.problem_key;
      if (c->distance > 0) why << " (log2 distance " << c->distance << ")";
      why << ", median " << fmt_ms(w.median_ms) << ", from the " << c->tuned->source->role
          << " database " << origin << "\n";
      sel.explanation = why.str();
      return sel;
    }
    if (notes > kMaxNotesPerRule) why << "  ... and " << notes - kMaxNotesPerRule << " more skipped\n";
    why << rule.name << ": " << rule.none << "\n";
  }

  // 6. Default: built-in templates first, the ones kforge ships and tests.
  auto candidates = catalog_.for_op(problem.op, info.backend);
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const TemplateSource* t) { return t->origin.rfind("builtin:", 0) == 0; });
  for (const TemplateSource* tpl : candidates) {
    const std::string def = tpl->manifest.default_config().canonical_name();
    EntryCheck c = checker_.check(tpl->manifest.name, "", def, problem, *op);
    if (!c.usable()) {
      why << "  default of " << tpl->manifest.name << " skipped: " << c.reason << "\n";
      continue;
    }
    sel.rule = "default";
    sel.template_name = tpl->manifest.name;
    sel.template_hash = checker_.current_hash(tpl->manifest.name);
    sel.config = def;
    why << "default: " << tpl->manifest.name << " " << def << ", the template's default configuration\n";
    sel.explanation = why.str();
    return sel;
  }
  return Error{ErrorCode::kUnsupported, "no template can run " + key + " on " + info.name, why.str()};
}

}  // namespace kforge
