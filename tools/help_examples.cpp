// The examples table and the --help footers built from it.
#include "tools/help_examples.hpp"

#include <sstream>

namespace kforge::cli {

const std::vector<HelpExamples>& help_examples() {
  static const std::vector<HelpExamples> table = {
      {"devices", {"kforge devices", "kforge devices --json"}},
      {"templates", {"kforge templates", "kforge templates --template path/to/my_template --json"}},
      {"tune",
       {"kforge tune --op gemm --shape M=256,N=256,K=256 --dtype f32 --max-evals 30 --db kforge.db",
        "kforge tune --op reduce --attr kind=max --strategy model --max-evals 12 --db kforge.db"}},
      {"show", {"kforge show --db kforge.db", "kforge show --db kforge.db --results --json"}},
      {"lookup",
       {"kforge lookup --shape M=250,N=260,K=256 --db kforge.db",
        "kforge lookup --op softmax --shape rows=512,cols=1000 --db kforge.db --json"}},
      {"compile",
       {"kforge compile --target cuda:sm_90 --op gemm --dtype bf16 --out out/",
        "kforge compile --target hip:gfx90a --op gemm --config BK8_BM32_BN32_PAD0_TM2_TN2_VW1 --out hip/"}},
      {"db", {"kforge db verify --db kforge.db", "kforge db merge a.db b.db -o all.db"}},
      {"db verify", {"kforge db verify --db kforge.db", "kforge db verify --db kforge.db --json"}},
      {"db merge", {"kforge db merge a.db b.db -o all.db"}},
      {"db migrate", {"kforge db migrate --db kforge.db"}},
      {"db export", {"kforge db export --db kforge.db --out dump.json"}},
      {"db import", {"kforge db import dump.json --db other.db"}},
      {"export",
       {"kforge export --db kforge.db --format header --out tuned.hpp",
        "kforge export --db kforge.db --all-results --format csv --out results.csv"}},
      {"import", {"kforge import winners.json --db other.db"}},
      {"compare",
       {"kforge compare main.db branch.db",
        "kforge compare main.json branch.db --markdown-out report.md --dtype f16"}},
      {"capabilities",
       {"kforge capabilities --db kforge.db", "kforge capabilities --no-db --target cuda:sm_90 --json"}},
      {"report", {"kforge report --db kforge.db --out report.html"}},
      {"inspect", {"kforge inspect out/", "kforge inspect out/ --kernel simt --json"}},
      {"ceilings", {"kforge ceilings --db kforge.db", "kforge ceilings --device cuda:0 --copy-mib 1024 --json"}},
      {"sweep",
       {"kforge sweep bench/plans/tiny.json --db sweep.db",
        "kforge sweep bench/plans/tiny.json --shard 1/2 --db a.db"}},
  };
  return table;
}

namespace {

std::string footer(const HelpExamples& e) {
  std::string out = "Examples:";
  for (const auto& c : e.commands) out += "\n  " + c;
  return out;
}

/// The subcommand at `path` ("db merge"). A path that names none throws
/// CLI11's OptionNotFound: the table is out of step with the commands.
CLI::App* find_subcommand(CLI::App& app, const std::string& path) {
  CLI::App* at = &app;
  std::istringstream words(path);
  for (std::string name; words >> name;) at = at->get_subcommand(name);
  return at;
}

}  // namespace

void add_help_examples(CLI::App& app) {
  for (const auto& e : help_examples()) {
    find_subcommand(app, e.path)->footer(footer(e));
  }
}

}  // namespace kforge::cli
