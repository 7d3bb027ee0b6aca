// `kforge templates`: the templates kforge knows, with their tunables.
#include <iostream>

#include "generator/backend_traits.hpp"
#include "generator/cartesian_size.hpp"
#include "generator/manifest.hpp"
#include "generator/operator.hpp"
#include "templates/builtin_templates.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

namespace {

/// Template hash per backend that has a prelude (the hash covers the prelude).
nlohmann::json hashes(const TemplateSource& t) {
  nlohmann::json h = nlohmann::json::object();
  for (const BackendTraits& b : all_backends()) {
    const std::string_view backend = b.name;
    if (!prelude_text(backend).empty() && t.manifest.supports_target(backend))
      h[std::string(backend)] = t.hash(prelude_text(backend));
  }
  return h;
}

/// The dims a tune of `op` without --shape runs ("" for an unknown operator).
std::string default_problem(const std::string& op) {
  const Operator* o = find_operator(op);
  if (!o) return "";
  Problem p;
  p.dims = o->default_dims();
  return p.dims_string();
}

/// Each operator's dims and the problem a tune without --shape runs.
void print_operators() {
  std::vector<std::vector<std::string>> rows;
  for (const Operator* op : all_operators()) {
    std::string dims;
    for (const auto& d : op->dims()) dims += (dims.empty() ? "" : ",") + d;
    rows.push_back({std::string(op->name()), dims, default_problem(std::string(op->name()))});
  }
  print_table({"op", "dims", "default problem (--shape)"}, rows);
}

nlohmann::json template_json(const TemplateSource& t) {
  const auto& m = t.manifest;
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : m.parameters) {
    params.push_back({{"name", p.name}, {"values", p.values}, {"default", p.default_value}, {"doc", p.doc}});
  }
  const CartesianSize size = cartesian_size(m);
  std::vector<std::string> dtypes, layouts, constraints, envelope;
  for (auto d : m.dtypes) dtypes.emplace_back(dtype_name(d));
  for (auto l : m.layouts) layouts.push_back(l.name());
  for (const auto& c : m.constraints) constraints.push_back(c.expr.text());
  for (const auto& e : m.envelope) envelope.push_back(e.expr.text());
  nlohmann::json j = {{"name", m.name},
                      {"operator", m.op},
                      {"description", m.description},
                      {"origin", t.origin},
                      {"targets", m.targets},
                      {"arch_guard", m.arch_guard},
                      {"dtypes", dtypes},
                      {"layouts", layouts},
                      {"parameters", params},
                      {"cartesian_size", size.value},
                      {"cartesian_size_overflows", size.overflows},
                      {"cartesian_size_decimal", size.decimal},
                      {"default_config", m.default_config().canonical_name()},
                      {"default_problem", default_problem(m.op)},
                      {"constraints", constraints},
                      {"envelope", envelope},
                      {"hashes", hashes(t)}};
  if (m.is_library()) {
    // Whether the library loads here: its identity, or why it cannot be used.
    j["library"] = m.library;
    j["library_identity"] = t.library_identity;
    j["library_unavailable"] = t.library_unavailable;
  }
  return j;
}

}  // namespace

void add_templates_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("templates", "List kernel templates: operator, dtypes, layouts, tunables, envelope");
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->callback([&o] {
    TemplateCatalog catalog = make_catalog(o);
    if (o.json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& t : catalog.all()) j.push_back(template_json(t));
      print_json(j);
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : catalog.all()) {
      auto j = template_json(t);
      std::string params;
      for (const auto& p : t.manifest.parameters) params += (params.empty() ? "" : " ") + p.name;
      rows.push_back({t.manifest.name, t.manifest.op, j["dtypes"].dump(), j["layouts"].dump(), params,
                      j["cartesian_size_decimal"].get<std::string>(),
                      j["default_config"].get<std::string>()});
    }
    print_table({"template", "op", "dtypes", "layouts", "parameters", "space", "default"}, rows);
    std::cout << "\nvendor libraries:\n";
    for (const auto& t : catalog.all())
      if (t.manifest.is_library())
        std::cout << "  "
                  << (t.library_unavailable.empty() ? t.manifest.name + ": " + t.library_identity
                                                    : t.library_unavailable)
                  << "\n";
    std::cout << "\n";
    print_operators();
  });
}

}  // namespace kforge::cli
