// Python bindings: the tuning database, its rows as dicts.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bindings/python/bindings.hpp"
#include "bindings/python/json_to_python.hpp"
#include "bindings/python/python_errors.hpp"
#include "db/database.hpp"

namespace nb = nanobind;

namespace kforge::python {

namespace {

using OptionalText = std::optional<std::string>;

nb::object parsed(const std::string& json_text) {
  return json_text.empty() ? nb::none() : json_to_python(nlohmann::json::parse(json_text));
}

nb::dict winner_dict(const WinnerRecord& w) {
  nb::dict d;
  d["device_key"] = w.device_key;
  d["problem_key"] = w.problem_key;
  d["op"] = w.op;
  d["dims"] = parsed(w.dims_json);
  d["dtype"] = w.dtype;
  d["layout"] = w.layout;
  d["template_name"] = w.template_name;
  d["template_hash"] = w.template_hash;
  d["config"] = w.config;
  d["median_ms"] = w.median_ms;
  d["result_id"] = w.result_id;
  return d;
}

nb::dict result_dict(const ResultRecord& r) {
  nb::dict d;
  d["id"] = r.id;
  d["sweep_id"] = r.sweep_id;
  d["device_key"] = r.device_key;
  d["problem_key"] = r.problem_key;
  d["template_name"] = r.template_name;
  d["template_hash"] = r.template_hash;
  d["config"] = r.config;
  d["status"] = r.status;
  d["reason"] = r.reason;
  d["median_ms"] = r.median_ms;
  d["p20_ms"] = r.p20_ms;
  d["p80_ms"] = r.p80_ms;
  d["min_ms"] = r.min_ms;
  d["max_ms"] = r.max_ms;
  d["count"] = r.count;
  d["error_norm"] = r.error_norm;
  d["error_ratio"] = r.error_ratio;
  d["compile_ms"] = r.compile_ms;
  d["resources"] = parsed(r.resources_json);
  d["created_at"] = r.created_at;
  return d;
}

nb::dict device_dict(const DeviceRecord& r) {
  nb::dict d;
  d["id"] = r.id;
  d["key"] = r.key;
  d["backend"] = r.backend;
  d["vendor"] = r.vendor;
  d["name"] = r.name;
  d["arch"] = r.arch;
  d["info"] = parsed(r.info_json);
  return d;
}

nb::dict problem_dict(const ProblemRecord& r) {
  nb::dict d;
  d["id"] = r.id;
  d["key"] = r.key;
  d["op"] = r.op;
  d["dims"] = parsed(r.dims_json);
  d["dtype"] = r.dtype;
  d["layout"] = r.layout;
  return d;
}

template <typename Record, typename ToDict>
nb::list rows(const std::vector<Record>& records, ToDict to_dict) {
  nb::list out;
  for (const Record& r : records) out.append(to_dict(r));
  return out;
}

/// An open database as Python holds it (a class Python may subclass).
struct PyDatabase {
  PyDatabase(const std::string& path, bool read_only)
      : db(unwrap(Database::open(path, read_only ? Database::Mode::kReadOnly : Database::Mode::kReadWrite))) {
  }
  std::unique_ptr<Database> db;
};

nb::list winners(Database& db, OptionalText op, OptionalText problem_key, OptionalText device_key) {
  Database::WinnerFilter f;
  f.op = std::move(op);
  f.problem_key = std::move(problem_key);
  f.device_key = std::move(device_key);
  return rows(unwrap(db.winners(f)), winner_dict);
}

nb::list results(Database& db, OptionalText problem_key, OptionalText template_name,
                 OptionalText device_key) {
  Database::ResultFilter f;
  f.problem_key = std::move(problem_key);
  f.template_name = std::move(template_name);
  f.device_key = std::move(device_key);
  return rows(unwrap(db.results(f)), result_dict);
}

nb::dict verify(Database& db) {
  Database::IntegrityReport r = unwrap(db.verify());
  nb::dict d;
  d["schema_version"] = r.schema_version;
  d["devices"] = r.devices;
  d["templates"] = r.templates;
  d["problems"] = r.problems;
  d["sweeps"] = r.sweeps;
  d["results"] = r.results;
  d["winners"] = r.winners;
  d["unfinished_sweeps"] = r.unfinished_sweeps;
  nb::list findings;
  for (const auto& f : r.findings) findings.append(f);
  d["findings"] = findings;
  return d;
}

/// `f(Database&, args...)` as a method of PyDatabase.
template <typename... Args>
auto on_db(nb::list (*f)(Database&, Args...)) {
  return [f](PyDatabase& d, Args... args) { return f(*d.db, std::move(args)...); };
}

}  // namespace

void bind_database(nb::module_& m) {
  nb::class_<PyDatabase>(m, "Database", "A kforge tuning database (SQLite); rows come back as dicts.")
      .def(nb::init<const std::string&, bool>(), nb::arg("path"), nb::arg("read_only") = false,
           "Opens (read-write: creates) the database at path; read_only opens an existing one.")
      .def_prop_ro("path", [](const PyDatabase& d) { return d.db->path(); })
      .def_prop_ro("schema_version", [](const PyDatabase& d) { return d.db->schema_version(); })
      .def("winners", on_db(&winners), nb::arg("op") = nb::none(), nb::arg("problem_key") = nb::none(),
           nb::arg("device_key") = nb::none(), "Best ok result per device, problem and template version.")
      .def("results", on_db(&results), nb::arg("problem_key") = nb::none(),
           nb::arg("template_name") = nb::none(), nb::arg("device_key") = nb::none(),
           "Every evaluated candidate.")
      .def("devices", [](PyDatabase& d) { return rows(unwrap(d.db->devices()), device_dict); })
      .def("problems", [](PyDatabase& d) { return rows(unwrap(d.db->problems()), problem_dict); })
      .def(
          "verify", [](PyDatabase& d) { return verify(*d.db); },
          "Integrity check of the file and of kforge's invariants.");
}

}  // namespace kforge::python
