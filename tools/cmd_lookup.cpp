// `kforge lookup`: what the runtime library would select for a problem, and why.
#include "commands.hpp"
#include "lookup.hpp"

namespace kforge::cli {

void add_lookup_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("lookup", "Show which kernel the runtime selects for a problem on a device, and why");
  add_problem_flags(*cmd, o);
  add_db_flag(*cmd, o);
  add_device_flag(*cmd, o);
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->callback([&o] {
    Problem problem = make_problem(o);
    auto device = open_device(o);
    auto lookup = unwrap(Lookup::open(o.db, *device, make_catalog(o)));
    Selection s = unwrap(lookup->select(problem));
    if (o.json) {
      nlohmann::json j = {{"template", s.template_name}, {"config", s.config},    {"rule", s.rule},
                          {"problem", s.problem.key()},  {"device", device->info().name},
                          {"template_hash", s.template_hash}, {"explanation", s.explanation}};
      if (s.rule != "default") {
        j["tuned_problem"] = s.tuned_problem;
        j["tuned_median_ms"] = s.tuned_median_ms;
      }
      if (s.rule == "nearest") j["distance"] = s.distance;
      print_json(j);
      return;
    }
    std::cout << s.rule << ": " << s.template_name << " " << s.config << "\n" << s.explanation;
  });
}

}  // namespace kforge::cli
