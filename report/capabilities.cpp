// Capabilities per target from the template catalog, the architecture guards
// and the database's tuning evidence.
#include "report/capabilities.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/bounded_json.hpp"
#include "generator/backend_traits.hpp"
#include "generator/operator.hpp"
#include "report/inspect/compile_check.hpp"
#include "report/template_regime.hpp"
#include "report/tuning_facts.hpp"
#include "report/vendor_comparison.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "templates/builtin_templates.hpp"

namespace kforge::report {

namespace {

using ojson = nlohmann::ordered_json;

/// Native GPU backends first (CUDA, HIP), then OpenCL.
int backend_rank(const std::string& b) {
  if (is_backend(b, BackendId::kCuda)) return 0;
  if (is_backend(b, BackendId::kHip)) return 1;
  return is_backend(b, BackendId::kOpenCL) ? 2 : 3;
}

/// The concrete architecture a guard entry names: "sm_80+" -> sm_80, "gfx90a" -> gfx90a; "" for families ("gfx9+").
std::pair<std::string, std::string> guard_target(const std::string& entry) {
  const bool plus = !entry.empty() && entry.back() == '+';
  const std::string base = plus ? entry.substr(0, entry.size() - 1) : entry;
  for (const BackendTraits& b : all_backends()) {
    if (b.arch_prefix.empty() || base.rfind(b.arch_prefix, 0) != 0) continue;
    // A CUDA entry names its lowest architecture; an AMD family ("gfx9+") none.
    if (plus && b.id == BackendId::kHip) break;
    return {std::string(b.name), base};
  }
  return {"", ""};
}

void add_target(std::vector<CapabilityTarget>& targets, const std::string& backend, const std::string& arch,
                const std::string& origin) {
  for (auto& t : targets) {
    if (t.backend == backend && t.arch == arch) {
      if (std::find(t.origins.begin(), t.origins.end(), origin) == t.origins.end()) t.origins.push_back(origin);
      return;
    }
  }
  targets.push_back({backend, arch, {origin}});
}

std::vector<std::string> names_of(const std::vector<Dtype>& v) {
  std::vector<std::string> out;
  for (auto d : v) out.emplace_back(dtype_name(d));
  return out;
}

std::vector<std::string> names_of(const std::vector<Layout>& v) {
  std::vector<std::string> out;
  for (const auto& l : v) out.push_back(l.name());
  return out;
}

/// The results of `rows` that are winners in `set`.
std::vector<const ResultRecord*> winners_among(const TuningSet& set, const std::vector<const ResultRecord*>& rows) {
  std::set<std::int64_t> winning;
  for (const auto& w : set.winners) winning.insert(w.result_id);
  std::vector<const ResultRecord*> out;
  for (const auto* r : rows)
    if (winning.count(r->id)) out.push_back(r);
  return out;
}

/// What the database shows for one template on one target, per template version.
ojson evidence_json(const TuningSet* set, const TemplateSource& t, const CapabilityTarget& target,
                    const std::vector<DeviceCeilings>& ceilings) {
  ojson versions = ojson::array();
  if (!set) return versions;
  const std::string current = t.hash(prelude_text(target.backend));
  std::map<std::string, std::vector<const ResultRecord*>> by_hash;
  for (const auto& r : set->results) {
    if (r.template_name != t.manifest.name) continue;
    const DeviceRecord* d = set->device(r.device_key);
    if (!d || d->backend != target.backend || (!target.arch.empty() && d->arch != target.arch)) continue;
    by_hash[r.template_hash].push_back(&r);
  }
  for (const auto& [hash, rows] : by_hash) {
    std::set<std::string> devices, problems, dtypes, layouts;
    std::map<std::string, int> failed;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> dims;
    std::string first, last;
    double max_error_ratio = 0;
    int ok = 0;
    for (const auto* r : rows) {
      devices.insert(set->device(r->device_key)->name);
      problems.insert(r->problem_key);
      if (const ProblemRecord* p = set->problem(r->problem_key)) {
        dtypes.insert(p->dtype);
        layouts.insert(p->layout);
        const auto j = parse_json_bounded(p->dims_json, "problems.dims_json");
        if (j.ok() && j->is_object()) {
          for (const auto& item : j->items()) {
            if (!item.value().is_number_integer()) continue;
            const auto v = item.value().get<std::int64_t>();
            auto it = dims.find(item.key());
            if (it == dims.end()) dims[item.key()] = {v, v};
            else it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
          }
        }
      }
      if (first.empty() || r->created_at < first) first = r->created_at;
      if (last.empty() || r->created_at > last) last = r->created_at;
      if (r->status == "ok") {
        ++ok;
        max_error_ratio = std::max(max_error_ratio, r->error_ratio);
      } else {
        ++failed[r->status];
      }
    }
    ojson dim_ranges = ojson::object();
    for (const auto& [k, v] : dims) dim_ranges[k] = {v.first, v.second};
    versions.push_back({{"template_hash", hash},
                        {"state", hash == current ? "current" : "stale"},
                        {"devices", devices},
                        {"problems", problems.size()},
                        {"dtypes", dtypes},
                        {"layouts", layouts},
                        {"dims", dim_ranges},
                        {"results", rows.size()},
                        {"validated", ok},
                        {"failed", failed},
                        {"max_error_ratio", max_error_ratio},
                        {"first_tuned", first},
                        {"last_tuned", last},
                        {"regime", regime_json(*set, winners_among(*set, rows), ceilings)}});
  }
  // Current version first, then by hash.
  std::stable_sort(versions.begin(), versions.end(), [](const ojson& a, const ojson& b) {
    return (a["state"] == "current") > (b["state"] == "current");
  });
  return versions;
}

ojson template_json(const TemplateSource& t, const CapabilityTarget& target, const CapabilitiesRequest& req) {
  const auto& m = t.manifest;
  std::vector<std::string> params, envelope;
  std::uint64_t space = 1;
  for (const auto& p : m.parameters) {
    params.push_back(p.name);
    space *= p.values.size();
  }
  for (const auto& e : m.envelope) envelope.push_back(e.expr.text());
  ojson j = {{"name", m.name},
          {"origin", t.origin.rfind("builtin:", 0) == 0 ? t.origin : std::string("user template")},
          {"guard", m.arch_guard},
          {"dtypes", names_of(m.dtypes)},
          {"layouts", names_of(m.layouts)},
          {"envelope", envelope},
          {"parameters", params},
          {"space", space},
          {"default_config", m.default_config().canonical_name()},
          {"hash", t.hash(prelude_text(target.backend))},
          {"evidence", evidence_json(req.evidence, t, target, req.ceilings)}};
  if (compile_checked(target)) j["compile_check"] = compile_check_json(t, target);
  return j;
}

}  // namespace

Result<CapabilityTarget> parse_target(const std::string& text) {
  const auto colon = text.find(':');
  CapabilityTarget t;
  t.backend = text.substr(0, colon);
  t.arch = colon == std::string::npos ? "" : text.substr(colon + 1);
  t.origins = {"--target"};
  if (!find_backend(t.backend)) {
    return Error::bad_input("--target: unknown backend in '" + text + "' (cuda:sm_NN, hip:gfxNNN, opencl[:ARCH])");
  }
  if (is_backend(t.backend, BackendId::kCuda) && !t.arch.empty() && t.arch.rfind("sm_", 0) != 0) {
    return Error::bad_input("--target: '" + text + "': a cuda architecture is sm_NN (e.g. cuda:sm_90)");
  }
  if (is_backend(t.backend, BackendId::kHip) && !t.arch.empty() && t.arch.rfind("gfx", 0) != 0) {
    return Error::bad_input("--target: '" + text + "': a hip architecture is gfxNNN (e.g. hip:gfx90a)");
  }
  return t;
}

namespace {

/// The templates the request names, by operator then name.
Result<std::vector<const TemplateSource*>> selected_templates(const CapabilitiesRequest& req) {
  std::vector<const TemplateSource*> templates;
  for (const auto& t : req.catalog->all()) {
    const bool named = req.only_templates.empty() || std::find(req.only_templates.begin(), req.only_templates.end(),
                                                               t.manifest.name) != req.only_templates.end();
    if (named && (req.op.empty() || t.manifest.op == req.op)) templates.push_back(&t);
  }
  for (const auto& name : req.only_templates) {
    if (!req.catalog->find(name)) return Error::not_found("--only: no template named '" + name + "'");
  }
  std::sort(templates.begin(), templates.end(), [](const TemplateSource* a, const TemplateSource* b) {
    return std::tie(a->manifest.op, a->manifest.name) < std::tie(b->manifest.op, b->manifest.name);
  });
  return templates;
}

/// Targets from the database's devices, the guards, --target, and each
/// targeted backend no target names yet; by backend, then architecture.
std::vector<CapabilityTarget> collect_targets(const CapabilitiesRequest& req,
                                              const std::vector<const TemplateSource*>& templates) {
  std::vector<CapabilityTarget> targets;
  if (req.evidence) {
    for (const auto& d : req.evidence->devices) add_target(targets, d.backend, d.arch, "database");
  }
  for (const auto* t : templates) {
    for (const auto& g : t->manifest.arch_guard) {
      auto [backend, arch] = guard_target(g);
      if (!backend.empty() && t->manifest.supports_target(backend)) add_target(targets, backend, arch, "guard");
    }
  }
  for (const auto& t : req.extra_targets) add_target(targets, t.backend, t.arch, "--target");
  for (const auto* t : templates) {
    for (const auto& backend : t->manifest.targets) {
      if (std::none_of(targets.begin(), targets.end(), [&](const CapabilityTarget& x) { return x.backend == backend; }))
        add_target(targets, backend, "", "template targets");
    }
  }
  std::sort(targets.begin(), targets.end(), [](const CapabilityTarget& a, const CapabilityTarget& b) {
    return std::make_pair(backend_rank(a.backend), a.arch) < std::make_pair(backend_rank(b.backend), b.arch);
  });
  return targets;
}

/// Whether `t`'s architecture guard lets it run on `target`.
Status guard_on(const TemplateSource& t, const CapabilityTarget& target) {
  if (t.manifest.arch_guard.empty()) return ok_status();
  if (target.arch.empty())
    return Error{ErrorCode::kUnsupported, t.manifest.name + " requires an architecture the target does not name", {}};
  return check_arch_guard(t.manifest, target.backend, target.arch);
}

/// The fallback, per dtype of a guarded-out template: the templates that apply here and support it.
void add_fallbacks(ojson& guarded, const std::vector<const TemplateSource*>& usable) {
  for (auto& g : guarded) {
    ojson fallback = ojson::array();
    for (const auto& dt : g["dtypes"]) {
      std::vector<std::string> names;
      for (const auto* u : usable)
        if (u->manifest.supports(*parse_dtype(dt.get<std::string>()))) names.push_back(u->manifest.name);
      fallback.push_back({{"dtype", dt}, {"templates", names}});
    }
    g["fallback"] = fallback;
    g.erase("dtypes");
  }
}

/// One operator on one target: the templates that apply, those guarded out
/// (with their fallbacks) and those for other backends.
ojson operator_json(const std::string& op, const CapabilityTarget& target,
                    const std::vector<const TemplateSource*>& templates, const CapabilitiesRequest& req) {
  const Operator* oper = find_operator(op);
  ojson oj = {{"op", op}, {"dims", oper ? ojson(oper->dims()) : ojson::array()}};
  ojson available = ojson::array(), guarded = ojson::array(), elsewhere = ojson::array();
  std::vector<const TemplateSource*> usable;
  for (const auto* t : templates) {
    if (t->manifest.op != op) continue;
    if (!t->manifest.supports_target(target.backend)) {
      elsewhere.push_back({{"name", t->manifest.name}, {"targets", t->manifest.targets}});
      continue;
    }
    const Status guard = guard_on(*t, target);
    if (guard.ok()) {
      available.push_back(template_json(*t, target, req));
      usable.push_back(t);
    } else {
      guarded.push_back({{"name", t->manifest.name}, {"guard", t->manifest.arch_guard},
                         {"reason", guard.error().message}, {"dtypes", names_of(t->manifest.dtypes)}});
    }
  }
  add_fallbacks(guarded, usable);
  oj["templates"] = available;
  oj["guarded_out"] = guarded;
  oj["other_backends"] = elsewhere;
  return oj;
}

ojson target_json(const CapabilityTarget& target, const std::set<std::string>& ops,
                  const std::vector<const TemplateSource*>& templates, const CapabilitiesRequest& req) {
  ojson tj = {{"target", target.name()}, {"backend", target.backend}, {"arch", target.arch},
              {"from", target.origins}};
  ojson devices = ojson::array();
  if (req.evidence) {
    for (const auto& d : req.evidence->devices)
      if (d.backend == target.backend && (target.arch.empty() || d.arch == target.arch))
        devices.push_back({{"key", d.key}, {"name", d.name}});
  }
  tj["devices"] = devices;
  tj["operators"] = ojson::array();
  for (const auto& op : ops) tj["operators"].push_back(operator_json(op, target, templates, req));
  return tj;
}

/// Per tuned problem with a library result: kforge's best kernel against the library's best.
ojson vendor_rows(const TuningSet& evidence) {
  ojson vendor = ojson::array();
  for (const VendorComparison& v : with_library(compare_vendor(evidence))) {
    const DeviceRecord* d = evidence.device(v.device_key);
    ojson row = ojson::parse(v.to_json().dump());
    row["device"] = d ? d->name : v.device_key;
    vendor.push_back(std::move(row));
  }
  return vendor;
}

}  // namespace

Result<ojson> describe_capabilities(const CapabilitiesRequest& req) {
  KF_TRY_ASSIGN(templates, selected_templates(req));
  std::set<std::string> ops;
  for (const auto* t : templates) ops.insert(t->manifest.op);
  ojson out;
  out["schema_version"] = kCapabilitiesSchemaVersion;
  out["evidence"] = req.evidence ? ojson(req.evidence_source) : ojson(nullptr);
  out["templates"] = ojson::array();
  for (const auto* t : templates) out["templates"].push_back(t->manifest.name);
  out["targets"] = ojson::array();
  for (const auto& target : collect_targets(req, templates))
    out["targets"].push_back(target_json(target, ops, templates, req));
  if (req.evidence) {
    ojson vendor = vendor_rows(*req.evidence);
    if (!vendor.empty()) out["vendor_comparison"] = std::move(vendor);
  }
  return out;
}

namespace {

std::string join(const ojson& arr, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : arr) s += (s.empty() ? "" : sep) + (x.is_string() ? x.get<std::string>() : x.dump());
  return s;
}

std::string cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

/// The tuned problems where a library candidate was measured beside the kernels.
std::string vendor_markdown(const ojson& rows) {
  auto side = [](const ojson& e) {
    return e.is_null() ? std::string("-")
                       : e["template"].get<std::string>() + " " + e["config"].get<std::string>() + " (" +
                             short_number(e["median_ms"].get<double>()) + " ms)";
  };
  std::ostringstream out;
  out << "\n## kforge against the vendor library\n\nRatio: kforge's best kernel median over the best library "
         "call's; above 1 the library is faster.\n\n| device | problem | kforge best | library best | ratio "
         "| faster |\n"
         "|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const double ratio = r["kernel_over_library"].get<double>();
    const std::string faster = r["faster"].get<std::string>();
    out << "| " << cell(r["device"].get<std::string>()) << " | " << cell(r["problem"].get<std::string>())
        << " | " << cell(side(r["kernel_best"])) << " | " << cell(side(r["library_best"])) << " | "
        << (ratio > 0 ? short_number(ratio, 3) : "-") << " | " << (faster.empty() ? "-" : faster) << " |\n";
  }
  return out.str();
}

std::string value(const ojson& v) {
  return v.is_number_integer() && v.get<std::int64_t>() < 0 ? "-" : v.dump();
}

/// The compile check's table, for the templates that have one.
std::string compile_check_markdown(const ojson& templates) {
  std::ostringstream out;
  for (const auto& x : templates) {
    if (!x.contains("compile_check")) continue;
    const ojson& c = x["compile_check"];
    if (out.tellp() == 0) {
      out << "\nCompile-checked with " << c["compiler"].get<std::string>()
          << " (default configuration, no GPU; register counts are this compiler's):\n\n"
          << "| template | problem | status | VGPRs | AGPRs | SGPRs | LDS B | spills | occupancy | why |\n"
          << "|---|---|---|---|---|---|---|---|---|---|\n";
    }
    const bool compiled = c.contains("vgprs");
    out << "| " << x["name"].get<std::string>() << " | "
        << (c.contains("problem") ? c["problem"].get<std::string>() : "-") << " | "
        << c["status"].get<std::string>() << " | "
        << (compiled ? value(c["vgprs"]) + " | " + value(c["agprs"]) + " | " + value(c["sgprs"]) + " | " +
                           value(c["lds_bytes"]) + " | " + value(c["spills"]) + " | " +
                           short_number(100.0 * c["occupancy"].get<double>(), 3) + "% (" +
                           c["occupancy_limiter"].get<std::string>() + ")"
                     : std::string("- | - | - | - | - | -"))
        << " | " << cell(c.value("reason", std::string())) << " |\n";
  }
  return out.str();
}

std::string evidence_text(const ojson& versions) {
  if (versions.empty()) return "not tuned here";
  std::string s;
  for (const auto& v : versions) {
    if (!s.empty()) s += "; ";
    s += "hash `" + v["template_hash"].get<std::string>() + "` (" + v["state"].get<std::string>() +
         "): tuned on " + join(v["devices"]) + ", " + std::to_string(v["problems"].get<int>()) + " problem" +
         (v["problems"].get<int>() == 1 ? "" : "s") + " (" + join(v["dtypes"], "/") + ", " +
         join(v["layouts"], "/") + "), " + std::to_string(v["validated"].get<int>()) + " of " +
         std::to_string(v["results"].get<int>()) + " candidates validated";
    if (!v["failed"].empty()) {
      std::string f;
      for (const auto& [k, n] : v["failed"].items())
        f += (f.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + k;
      s += " (" + f + ")";
    }
    s += ", max error ratio " + short_number(v["max_error_ratio"].get<double>(), 2) + ", " +
         v["first_tuned"].get<std::string>() + " to " + v["last_tuned"].get<std::string>();
    if (const std::string regime = regime_text(v["regime"]); !regime.empty()) s += "; regime: " + regime;
  }
  return s;
}

}  // namespace

std::string render_capabilities_markdown(const ojson& m) {
  std::ostringstream out;
  out << "# kforge capabilities\n\n";
  out << "Templates described: " << join(m["templates"]) << ". Evidence: "
      << (m["evidence"].is_null() ? std::string("none (no database)") : "`" + m["evidence"].get<std::string>() + "`")
      << ". Everything below is derived from the templates' manifests, their architecture guards and the "
         "database; see docs/capabilities.md.\n";
  for (const auto& t : m["targets"]) {
    out << "\n## " << t["target"].get<std::string>() << "\n\n";
    out << "From: " << join(t["from"]) << ". Devices in the database: ";
    if (t["devices"].empty()) out << "none";
    for (std::size_t i = 0; i < t["devices"].size(); ++i)
      out << (i ? ", " : "") << t["devices"][i]["name"].get<std::string>();
    out << ".\n";
    for (const auto& op : t["operators"]) {
      out << "\n### " << op["op"].get<std::string>() << " (dims " << join(op["dims"]) << ")\n\n";
      if (op["templates"].empty()) {
        out << "No template applies on this target.\n";
      } else {
        out << "| template | guard | dtypes | layouts | envelope | tunables (space) | default | evidence |\n"
            << "|---|---|---|---|---|---|---|---|\n";
        for (const auto& x : op["templates"]) {
          out << "| " << x["name"].get<std::string>() << " | "
              << (x["guard"].empty() ? std::string("portable") : "passes: " + join(x["guard"], " or ")) << " | "
              << join(x["dtypes"]) << " | " << join(x["layouts"]) << " | "
              << cell(x["envelope"].empty() ? std::string("any shape") : join(x["envelope"], "; ")) << " | "
              << join(x["parameters"], " ") << " (" << x["space"].get<std::uint64_t>() << ") | "
              << x["default_config"].get<std::string>() << " | " << cell(evidence_text(x["evidence"])) << " |\n";
        }
      }
      out << compile_check_markdown(op["templates"]);
      for (const auto& g : op["guarded_out"]) {
        out << "\n- **" << g["name"].get<std::string>() << "** is guarded out: " << cell(g["reason"].get<std::string>())
            << ". Fallback: ";
        std::string fb;
        for (const auto& f : g["fallback"]) {
          fb += (fb.empty() ? "" : "; ") + f["dtype"].get<std::string>() + " → " +
                (f["templates"].empty() ? std::string("none (not supported on this target)") : join(f["templates"]));
        }
        out << fb << ".\n";
      }
      for (const auto& e : op["other_backends"]) {
        out << "\n- " << e["name"].get<std::string>() << " does not build for this backend (targets "
            << join(e["targets"]) << ").\n";
      }
    }
  }
  if (m.contains("vendor_comparison")) out << vendor_markdown(m["vendor_comparison"]);
  return out.str();
}

}  // namespace kforge::report
