// Selection chain, validity checks and the kernel cache.
#include "lookup.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "builtin_templates.hpp"
#include "instance.hpp"
#include "search_space.hpp"

namespace kforge {

namespace {

double log_distance(const Problem& p, const std::map<std::string, std::int64_t>& tuned) {
  double d = 0;
  for (const auto& [name, v] : p.dims) {
    auto it = tuned.find(name);
    if (it == tuned.end()) return std::numeric_limits<double>::infinity();
    d += std::fabs(std::log2(static_cast<double>(v)) - std::log2(static_cast<double>(it->second)));
  }
  return d;
}

std::string fmt_ms(double ms) {
  std::ostringstream s;
  s.precision(4);
  s << ms << " ms";
  return s.str();
}

}  // namespace

Result<std::unique_ptr<Lookup>> Lookup::open(const std::string& db_path, Device& device,
                                             TemplateCatalog catalog) {
  std::unique_ptr<Database> db;
  std::string note;
  if (!std::filesystem::exists(db_path)) {
    note = "no tuning database at " + db_path;
  } else {
    KF_TRY_ASSIGN(opened, Database::open(db_path, Database::Mode::kReadOnly));
    db = std::move(opened);
  }
  return std::unique_ptr<Lookup>(new Lookup(std::move(db), std::move(note), device, std::move(catalog)));
}

Result<Selection> Lookup::select(const Problem& problem) {
  std::lock_guard lock(mutex_);
  const std::string key = problem.key();
  if (auto it = selections_.find(key); it != selections_.end()) return it->second;
  KF_TRY_ASSIGN(sel, select_uncached(problem));
  selections_.emplace(key, sel);
  return sel;
}

Result<Selection> Lookup::select_uncached(const Problem& requested) {
  const Operator* op = find_operator(requested.op);
  if (!op) return Error::bad_input("unknown operator '" + requested.op + "'");
  KF_TRY_ASSIGN(problem, op->normalize(requested));
  const DeviceInfo& info = device_.info();
  const DeviceLimits limits = info.limits();
  const std::string_view prelude = prelude_text(info.backend);
  std::ostringstream why;

  // An entry is usable when its template is current and its configuration is
  // declared and valid for this problem on this device.
  auto usable = [&](const WinnerRecord& w) -> bool {
    const TemplateSource* tpl = catalog_.find(w.template_name);
    if (!tpl) {
      why << "  skipped " << w.template_name << " " << w.config << ": template not known to this kforge\n";
      return false;
    }
    if (tpl->hash(prelude) != w.template_hash) {
      why << "  skipped " << w.template_name << " " << w.config << " (tuned on " << w.problem_key
          << "): stale, recorded under template hash " << w.template_hash << ", current is "
          << tpl->hash(prelude) << "\n";
      return false;
    }
    auto cfg = Config::parse(w.config);
    Status declared = cfg.ok() ? tpl->manifest.check_declared(*cfg) : Status(cfg.error());
    if (!declared.ok()) {
      why << "  skipped invalid entry " << w.template_name << " '" << w.config
          << "': " << declared.error().message << "\n";
      return false;
    }
    if (!tpl->manifest.supports(problem.dtype) || !tpl->manifest.supports(problem.layout)) return false;
    auto valid = SearchSpace(tpl->manifest, *op, problem, limits).is_valid(*cfg);
    if (!valid.ok() || !*valid) {
      why << "  skipped " << w.template_name << " " << w.config
          << ": not valid for this problem on this device (constraints or envelope)\n";
      return false;
    }
    return true;
  };

  Selection sel;
  sel.problem = problem;
  if (db_) {
    Database::WinnerFilter f;
    f.device_key = info.hardware_key();
    f.op = problem.op;
    f.dtype = std::string(dtype_name(problem.dtype));
    f.layout = problem.layout.name();
    KF_TRY_ASSIGN(winners, db_->winners(f));  // fastest first
    for (const auto& w : winners) {
      if (w.problem_key != problem.key() || !usable(w)) continue;
      sel.rule = "exact";
      sel.template_name = w.template_name;
      sel.template_hash = w.template_hash;
      sel.config = w.config;
      sel.tuned_problem = w.problem_key;
      sel.tuned_median_ms = w.median_ms;
      why << "exact: " << w.template_name << " " << w.config << " was tuned on this device ("
          << info.name << ") for " << w.problem_key << ", median " << fmt_ms(w.median_ms) << "\n";
      sel.explanation = why.str();
      return sel;
    }
    why << "exact: no usable entry for " << problem.key() << " on this device\n";
    const WinnerRecord* nearest = nullptr;
    double best_d = std::numeric_limits<double>::infinity();
    for (const auto& w : winners) {
      if (w.problem_key == problem.key()) continue;
      std::map<std::string, std::int64_t> dims;
      try {
        dims = nlohmann::json::parse(w.dims_json).get<std::map<std::string, std::int64_t>>();
      } catch (const std::exception&) {
        why << "  skipped entry with unreadable dims '" << w.dims_json << "'\n";
        continue;
      }
      const double d = log_distance(problem, dims);
      if (d < best_d && usable(w)) {  // winners are fastest first: ties keep the faster
        best_d = d;
        nearest = &w;
      }
    }
    if (nearest) {
      sel.rule = "nearest";
      sel.template_name = nearest->template_name;
      sel.template_hash = nearest->template_hash;
      sel.config = nearest->config;
      sel.tuned_problem = nearest->problem_key;
      sel.tuned_median_ms = nearest->median_ms;
      sel.distance = best_d;
      why << "nearest: " << nearest->template_name << " " << nearest->config << " tuned on this device for "
          << nearest->problem_key << " (log2 distance " << best_d << "), median "
          << fmt_ms(nearest->median_ms) << "\n";
      sel.explanation = why.str();
      return sel;
    }
    why << "nearest: no usable tuned problem for " << problem.op << " "
        << dtype_name(problem.dtype) << " " << problem.layout.name() << " on this device\n";
  } else {
    why << "exact, nearest: " << db_note_ << "\n";
  }

  // Built-in templates first: the fallback is the one kforge ships and tests.
  auto candidates = catalog_.for_op(problem.op, info.backend);
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const TemplateSource* t) { return t->origin.rfind("builtin:", 0) == 0; });
  for (const TemplateSource* tpl : candidates) {
    const auto& m = tpl->manifest;
    if (!m.supports(problem.dtype) || !m.supports(problem.layout)) continue;
    const Config def = m.default_config();
    auto valid = SearchSpace(m, *op, problem, limits).is_valid(def);
    if (!valid.ok() || !*valid) {
      why << "  default of " << m.name << " is not valid for this problem on this device\n";
      continue;
    }
    sel.rule = "default";
    sel.template_name = m.name;
    sel.template_hash = tpl->hash(prelude);
    sel.config = def.canonical_name();
    why << "default: " << m.name << " " << sel.config << ", the template's default configuration\n";
    sel.explanation = why.str();
    return sel;
  }
  return Error{ErrorCode::kUnsupported,
               "no template can run " + problem.key() + " on " + info.name, why.str()};
}

Result<double> Lookup::launch(const Selection& selection, const std::vector<KernelArg>& args) {
  std::lock_guard lock(mutex_);
  const std::string key = selection.template_name + "/" + selection.config + "/" + selection.problem.key();
  auto it = kernels_.find(key);
  if (it == kernels_.end()) {
    const TemplateSource* tpl = catalog_.find(selection.template_name);
    const Operator* op = find_operator(selection.problem.op);
    if (!tpl || !op) return Error::not_found("template '" + selection.template_name + "' is not known");
    KF_TRY_ASSIGN(cfg, Config::parse(selection.config));
    KF_TRY_ASSIGN(inst, instantiate(*tpl, prelude_text(device_.info().backend), *op, cfg,
                                    selection.problem, device_.info().limits()));
    KF_TRY_ASSIGN(compiled, device_.compiler().compile(inst.source, inst.kernel_name, ""));
    KF_TRY_ASSIGN(kernel, device_.load(compiled));
    it = kernels_.emplace(key, Loaded{std::move(kernel), inst.geometry}).first;
  }
  return device_.launch(*it->second.kernel, args, it->second.geometry);
}

}  // namespace kforge
