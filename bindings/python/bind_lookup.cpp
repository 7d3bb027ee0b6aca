// Python bindings: the runtime lookup (select, explain, launch), its
// selections and the kernels they prepare.
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "bindings/python/bindings.hpp"
#include "bindings/python/bound_kernel.hpp"
#include "bindings/python/problem_from_python.hpp"
#include "bindings/python/python_errors.hpp"
#include "runtime/lookup/lookup.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

/// `python -m kforge._online_tune` in this interpreter.
std::vector<std::string> python_online_command() {
  const std::string python = nb::cast<std::string>(nb::module_::import_("sys").attr("executable"));
  return {python, "-m", "kforge._online_tune"};
}

/// A lookup with the kernels Python asked for, one per selection.
struct PyLookup {
  explicit PyLookup(std::unique_ptr<Lookup> l) : lookup(std::move(l)) {}
  PyLookup(PyLookup&&) = default;
  PyLookup(const PyLookup&) = delete;

  std::unique_ptr<Lookup> lookup;
  std::map<std::string, std::unique_ptr<BoundKernel>> kernels;

  BoundKernel& kernel(const Selection& s) {
    std::string key = s.problem.key() + "|" + s.template_name + "|" + s.config;
    auto& slot = kernels[key];
    if (!slot) slot = std::make_unique<BoundKernel>(*lookup, s);
    return *slot;
  }
};

std::string_view kind_name(OperatorArg::Kind k) {
  switch (k) {
    case OperatorArg::Kind::kTensor:
      return "tensor";
    case OperatorArg::Kind::kInt32:
      return "int32";
    case OperatorArg::Kind::kFloat32:
      return "float32";
  }
  return "unknown";
}

nb::list argument_list(const std::vector<ArgumentSpec>& specs) {
  nb::list out;
  for (const ArgumentSpec& a : specs) {
    nb::dict d;
    d["name"] = a.name;
    d["kind"] = kind_name(a.kind);
    if (a.kind == OperatorArg::Kind::kTensor) {
      d["dtype"] = dtype_name(a.dtype);
      d["elements"] = a.elements;
      d["is_output"] = a.is_output;
      d["accessed"] = a.accessed;
    }
    d["value"] = a.value ? nb::cast(*a.value) : nb::none();
    out.append(d);
  }
  return out;
}

nb::dict problem_dict(const Problem& p) {
  nb::dict d;
  d["op"] = p.op;
  d["dims"] = p.dims;
  d["dtype"] = dtype_name(p.dtype);
  d["layout"] = p.layout.name();
  d["epilogue"] = p.epilogue.name();
  d["attrs"] = p.attrs;
  d["key"] = p.key();
  return d;
}

/// Online tuning from Python: the tuner process is this interpreter's
/// `python -m kforge._online_tune` (the package ships no kforge executable).
OnlineTuningOptions online_options(const std::string& mode, int max_evals, double time_budget_s) {
  const auto parsed = parse_online_mode(mode);
  if (!parsed) throw_bad_input("online: '" + mode + "': expected off, background or blocking");
  if (max_evals < 0 || !(time_budget_s >= 0)) throw_bad_input("online: a negative budget");
  OnlineTuningOptions o;
  o.mode = *parsed;
  o.max_evals = max_evals;
  o.time_budget_s = time_budget_s;
  o.command = python_online_command();
  return o;
}

PyLookup open_lookup(PyDevice& device, const std::string& db, const std::string& system_db,
                     const std::vector<std::string>& template_dirs, bool binary_cache,
                     const std::string& cache_dir, nb::object on_warning, std::optional<std::string> online,
                     int online_max_evals, double online_time_budget_s) {
  TemplateCatalog catalog = unwrap(TemplateCatalog::builtin());
  for (const auto& dir : template_dirs) unwrap(catalog.add_dir(dir));
  LookupOptions o;
  o.user_db = db;
  o.system_db = system_db;
  o.use_binary_cache = binary_cache;
  o.binary_cache_dir = cache_dir;
  o.online.command = python_online_command();  // where KFORGE_ONLINE_TUNING switches it on
  if (!on_warning.is_none()) {
    o.on_warning = [on_warning](const std::string& message) {
      nb::gil_scoped_acquire gil;
      on_warning(message);
    };
  }
  PyLookup lookup(unwrap(Lookup::open(o, *device.device, std::move(catalog))));
  if (online) unwrap(lookup.lookup->set_online_tuning(online_options(*online, online_max_evals, online_time_budget_s)));
  return lookup;
}

Selection select(PyLookup& l, std::string op, std::map<std::string, std::int64_t> dims, std::string dtype,
                 std::string layout, std::string epilogue, std::map<std::string, std::string> attrs) {
  ProblemFields f{std::move(op),     std::move(dims),     std::move(dtype),
                  std::move(layout), std::move(epilogue), std::move(attrs)};
  const Problem problem = problem_from_fields(f);
  nb::gil_scoped_release release;  // a blocking online tune takes seconds
  return unwrap(l.lookup->select(problem));
}

void bind_selection(nb::module_& m) {
  nb::class_<Selection>(m, "Selection", "What the lookup chose for a problem, and why.")
      .def_prop_ro("rule", [](const Selection& s) { return std::string(name(s.rule)); })
      .def_ro("template_name", &Selection::template_name)
      .def_ro("template_hash", &Selection::template_hash)
      .def_ro("config", &Selection::config)
      .def_ro("tuned_problem", &Selection::tuned_problem)
      .def_ro("tuned_device", &Selection::tuned_device)
      .def_ro("database", &Selection::database)
      .def_ro("tuned_median_ms", &Selection::tuned_median_ms)
      .def_ro("distance", &Selection::distance)
      .def_ro("explanation", &Selection::explanation)
      .def_ro("online", &Selection::online, "'background' or 'blocking' when the entry was tuned online, else ''.")
      .def_ro("library_best", &Selection::library_best,
              "Where this problem was tuned with library candidates and kernels: the fastest library entry "
              "(\"gemm_clblast BATCHED0\"); \"\" otherwise.")
      .def_ro("library_best_ms", &Selection::library_best_ms)
      .def_ro("kernel_best", &Selection::kernel_best, "As library_best, for the fastest kforge kernel.")
      .def_ro("kernel_best_ms", &Selection::kernel_best_ms)
      .def_prop_ro(
          "library_call",
          [](const Selection& s) -> nb::object {
            if (s.library_call.empty()) return nb::none();
            return nb::module_::import_("json").attr("loads")(s.library_call);
          },
          "A library entry's stored call (the library, its version and the call's parameters) as a dict, "
          "which prepare() replays; None for a kernel.")
      .def_prop_ro("problem", [](const Selection& s) { return problem_dict(s.problem); })
      .def_prop_ro(
          "arguments",
          [](const Selection& s) {
            const Operator* op = find_operator(s.problem.op);
            if (!op) throw_bad_input("unknown operator '" + s.problem.op + "'");
            return argument_list(op->arguments(s.problem));
          },
          "The operator's argument list for this problem, in launch order.")
      .def("__repr__", [](const Selection& s) {
        return "<kforge.Selection " + s.problem.key() + " -> " + s.template_name + " " + s.config + " (" +
               std::string(name(s.rule)) + ")>";
      });
}

void bind_kernel(nb::module_& m) {
  nb::class_<BoundKernel>(m, "Kernel", "A selection compiled and ready to launch; buffers are reused.")
      .def("__call__", &BoundKernel::launch,
           "Launches: with host tensors, waits and returns the kernel's device time in ms; with every tensor on the device, enqueues and returns None.")
      .def("launch", &BoundKernel::launch,
           "Launches: with host tensors, waits and returns the kernel's device time in ms; with every tensor on the device, enqueues and returns None.")
      .def_prop_ro("selection", &BoundKernel::selection)
      .def_prop_ro("arguments", [](const BoundKernel& k) { return argument_list(k.arguments()); })
      .def_prop_ro("origin", [](const BoundKernel& k) { return std::string(name(k.prepared().origin)); })
      .def_prop_ro("binary_key", [](const BoundKernel& k) { return k.prepared().binary_key; });
}

}  // namespace

void bind_lookup(nb::module_& m) {
  bind_selection(m);
  bind_kernel(m);
  nb::class_<PyLookup>(m, "Lookup",
                       "Selects tuned kernels from databases, compiles them once, launches them.")
      .def(nb::new_(&open_lookup), nb::arg("device"), nb::arg("db") = "", nb::arg("system_db") = "",
           nb::arg("template_dirs") = std::vector<std::string>{}, nb::arg("binary_cache") = true,
           nb::arg("cache_dir") = "", nb::arg("on_warning").none() = nb::none(), nb::arg("online").none() = nb::none(),
           nb::arg("online_max_evals") = OnlineTuningOptions{}.max_evals,
           nb::arg("online_time_budget_s") = OnlineTuningOptions{}.time_budget_s, nb::keep_alive<1, 2>())
      .def("select", &select, nb::arg("op"), nb::arg("dims"), nb::arg("dtype") = "f32",
           nb::arg("layout") = "NN", nb::arg("epilogue") = "none",
           nb::arg("attrs") = std::map<std::string, std::string>{},
           "The selection for a problem (cached per problem).")
      .def(
          "explain",
          [](PyLookup& l, std::string op, std::map<std::string, std::int64_t> dims, std::string dtype,
             std::string layout, std::string epilogue, std::map<std::string, std::string> attrs) {
            return select(l, std::move(op), std::move(dims), std::move(dtype), std::move(layout),
                          std::move(epilogue), std::move(attrs))
                .explanation;
          },
          nb::arg("op"), nb::arg("dims"), nb::arg("dtype") = "f32", nb::arg("layout") = "NN",
          nb::arg("epilogue") = "none", nb::arg("attrs") = std::map<std::string, std::string>{},
          "Every rule the selection tried, one per line.")
      .def("kernel", &PyLookup::kernel, nb::arg("selection"), nb::rv_policy::reference_internal,
           "The selection compiled (once) and ready to launch.")
      .def(
          "launch",
          [](PyLookup& l, const Selection& s, const nb::args& args, const nb::kwargs& kwargs) {
            return l.kernel(s).launch(args, kwargs);
          },
          nb::arg("selection"), nb::arg("args"), nb::arg("kwargs"),
          "Launches the selection's kernel with tensors and scalars (as Kernel.launch).")
      .def(
          "synchronize",
          [](PyLookup& l) {
            nb::gil_scoped_release release;
            unwrap(l.lookup->synchronize());
          },
          "Waits until every kernel launched on the lookup's device has finished.")
      .def(
          "set_override",
          [](PyLookup& l, const std::string& op, const std::string& tpl, const std::string& config) {
            unwrap(l.lookup->set_override(op, tpl, config));
          },
          nb::arg("op"), nb::arg("template_name"), nb::arg("config"))
      .def("clear_override", [](PyLookup& l, const std::string& op) { l.lookup->clear_override(op); })
      .def(
          "set_online_tuning",
          [](PyLookup& l, const std::string& mode, int max_evals, double time_budget_s) {
            const OnlineTuningOptions o = online_options(mode, max_evals, time_budget_s);
            nb::gil_scoped_release release;  // stopping a running tune waits for its thread
            unwrap(l.lookup->set_online_tuning(o));
          },
          nb::arg("mode"), nb::arg("max_evals") = OnlineTuningOptions{}.max_evals,
          nb::arg("time_budget_s") = OnlineTuningOptions{}.time_budget_s,
          "Tuning on a miss: 'background', 'blocking' or 'off' (docs/python.md, \"Online tuning\").")
      .def(
          "wait_online",
          [](PyLookup& l, double timeout_s) {
            nb::gil_scoped_release release;
            return l.lookup->wait_online_idle(timeout_s);
          },
          nb::arg("timeout_s") = 600.0, "Waits until no online tune is queued or running; False on timeout.")
      .def_prop_ro("binary_cache_dir", [](const PyLookup& l) { return l.lookup->binary_cache_dir(); })
      .def_prop_ro("kernel_stats", [](const PyLookup& l) {
        KernelStats s = l.lookup->kernel_stats();
        nb::dict d;
        d["memory_hits"] = s.memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["compiles"] = s.compiles;
        d["disk_corrupt"] = s.disk_corrupt;
        d["disk_load_failures"] = s.disk_load_failures;
        return d;
      });
}

}  // namespace kforge::python
