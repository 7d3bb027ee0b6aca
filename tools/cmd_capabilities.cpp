// `kforge capabilities`: what each target supports, derived from the
// templates, their architecture guards and the tuning database.
#include <filesystem>
#include <iostream>

#include "db/tuning_set.hpp"
#include "report/capabilities.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct CapabilitiesOptions {
  std::vector<std::string> targets, only;
  std::string op, ceilings;
  bool no_db = false;
};

}  // namespace

void add_capabilities_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand(
      "capabilities",
      "Describe, per target (cuda:sm_XX, hip:gfxXXX, opencl device), each operator's templates: dtypes,\n"
      "layouts, shape envelope, tunables, architecture guards and, where a guard fails, the fallback per\n"
      "dtype; plus the database's evidence: on which devices each template version was tuned and validated,\n"
      "when, and whether that version is current. Targets come from the database's devices, the guards'\n"
      "architectures and --target. Markdown by default, --json for tools (docs/capabilities.md).");
  auto s = std::make_shared<CapabilitiesOptions>();
  add_db_option(*cmd, o, "Tuning database (or JSON export with --all-results) for the evidence");
  cmd->add_flag("--no-db", s->no_db, "Describe the templates only, without evidence");
  cmd->add_option("--target", s->targets, "Also describe this target: cuda:sm_NN, hip:gfxNNN, opencl[:ARCH]; repeatable");
  cmd->add_option("--only", s->only, "Only these templates (by name); repeatable");
  cmd->add_option("--op", s->op, "Only this operator");
  cmd->add_option("--ceilings", s->ceilings,
                  "JSON file of device peaks for each winner's bound (the `report` format, docs/report.md)");
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->callback([&o, s] {
    const TemplateCatalog catalog = make_catalog(o);
    CapabilitiesRequest req;
    req.catalog = &catalog;
    req.only_templates = s->only;
    req.op = s->op;
    for (const auto& t : s->targets) req.extra_targets.push_back(unwrap(parse_target(t)));
    if (!s->ceilings.empty()) req.ceilings = unwrap(load_ceilings(s->ceilings));
    TuningSet evidence;
    if (!s->no_db) {
      if (!std::filesystem::exists(o.db)) {
        std::cerr << "kforge: " << o.db << " does not exist: no evidence (--no-db silences this)\n";
      } else {
        TuningFilter all;
        all.all_results = true;
        if (!s->op.empty()) all.op = s->op;
        evidence = unwrap(load_tuning_set(o.db, all));
        req.evidence = &evidence;
        req.evidence_source = std::filesystem::path(o.db).filename().string();
      }
    }
    const auto model = unwrap(describe_capabilities(req));
    if (o.json) {
      std::cout << model.dump(2) << std::endl;
    } else {
      std::cout << render_capabilities_markdown(model);
    }
  });
}

}  // namespace kforge::cli
