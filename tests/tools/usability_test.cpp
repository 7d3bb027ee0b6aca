// What a first-time user meets: an example in every --help, a default
// problem for every operator, and one meaning of --device everywhere.
#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/tools/cli_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

const std::string kFast = " --min-reps 2 --max-reps 2 --quiet ";

/// Names listed under "SUBCOMMANDS:" (CLI11's heading) in a --help text.
std::vector<std::string> subcommands_in(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  std::string line;
  bool in_list = false;
  std::size_t name_indent = std::string::npos;
  while (std::getline(in, line)) {
    if (line.rfind("SUBCOMMANDS:", 0) == 0 || line.rfind("Subcommands:", 0) == 0) {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty() || line[0] != ' ') break;
    // Names stand at the first line's indent; wrapped descriptions elsewhere.
    const auto indent = line.find_first_not_of(' ');
    if (name_indent == std::string::npos) name_indent = indent;
    if (indent != name_indent) continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (!name.empty()) out.push_back(name);
  }
  return out;
}

/// The "kforge ..." lines under "Examples:".
std::vector<std::string> examples_in(const std::string& help) {
  std::vector<std::string> out;
  const auto at = help.find("Examples:");
  if (at == std::string::npos) return out;
  std::istringstream in(help.substr(at));
  std::string line;
  while (std::getline(in, line)) {
    const auto start = line.find("kforge ");
    if (start != std::string::npos) out.push_back(line.substr(start));
  }
  return out;
}

/// Every --flag an example passes must be one its command's --help lists.
void check_examples(const std::string& path) {
  const auto r = test::run_kforge(path + " --help");
  INFO("kforge " << path << " --help:\n" << r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto examples = examples_in(r.out);
  CHECK_FALSE(examples.empty());
  for (const auto& e : examples) {
    INFO("example: " << e);
    CHECK(e.rfind("kforge " + path, 0) == 0);
    std::istringstream words(e);
    std::string w;
    while (words >> w) {
      if (w.rfind("--", 0) == 0) CHECK(r.out.find(w) != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("cli: every command's --help ends with examples it accepts", "[cli][help]") {
  const auto top = test::run_kforge("--help");
  REQUIRE(top.exit_code == 0);
  const auto verbs = subcommands_in(top.out);
  REQUIRE(verbs.size() >= 10);
  for (const auto& verb : verbs) {
    check_examples(verb);
    const auto nested = subcommands_in(test::run_kforge(verb + " --help").out);
    for (const auto& sub : nested) check_examples(verb + " " + sub);
  }
}

TEST_CASE("cli: an operator tuned without --shape runs its default problem", "[cli][default_problem]") {
  test::TempDir dir;
  const auto r = test::run_kforge("tune --op softmax --max-evals 1 --json" + kFast + "--db " + dir.file("t.db"));
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(json::parse(r.out)["problem"] == "softmax/cols=1024,rows=1024/f32/NN");

  const auto listed = test::run_kforge("templates --json");
  REQUIRE(listed.exit_code == 0);
  for (const auto& t : json::parse(listed.out)) {
    if (t["operator"] == "softmax") CHECK(t["default_problem"] == "cols=1024,rows=1024");
  }
}

TEST_CASE("cli: a shape of another operator's dims names the dims to give", "[cli][default_problem]") {
  const auto r = test::run_kforge("lookup --op reduce --shape M=64,N=64,K=64 --db no-such.db");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown dimension") &&
                        Catch::Contains("--shape for reduce takes rows, cols, e.g. cols=1024,rows=1024"));
}

TEST_CASE("cli: --device names one device in tune, lookup and the stored-row commands", "[cli][device]") {
  const auto devices = test::run_kforge("devices --json");
  REQUIRE(devices.exit_code == 0);
  const json list = json::parse(devices.out);
  REQUIRE_FALSE(list.empty());
  const std::string key = list[0]["hardware_key"];
  const std::string arch = list[0]["arch"];

  test::TempDir dir;
  const std::string db = dir.file("d.db");
  // The key opens the same device that opencl:0 does.
  const auto tuned = test::run_kforge("tune --shape M=32,N=32,K=32 --max-evals 2 --json --device " + key + kFast +
                                      "--db " + db);
  INFO(tuned.out << tuned.err);
  REQUIRE(tuned.exit_code == 0);

  auto exported = [&](const std::string& device) {
    const auto r = test::run_kforge("export --format json --db " + db + " --device " + device);
    INFO("--device " << device << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["winners"].size();
  };
  CHECK(exported("opencl:0") == 1);
  CHECK(exported(key) == 1);
  CHECK(exported(arch) == 1);
  CHECK(exported("no-such-device") == 0);  // a stored-row filter: nothing matches, nothing exported

  const auto missing = test::run_kforge("export --format json --db " + db + " --device opencl:9");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("no device 'opencl:9'"));
  const auto unknown = test::run_kforge("lookup --db " + db + " --device no-such-device");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("no device matches 'no-such-device'") && Catch::Contains("opencl:0"));
}

TEST_CASE("cli: progress names each phase, before the first candidate and after the last", "[cli][progress]") {
  test::TempDir dir;
  const auto r = test::run_kforge("tune --shape M=32,N=32,K=32 --max-evals 6 --min-reps 2 --max-reps 2 --db " +
                                  dir.file("p.db"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto setup = r.err.find("tuning 6 candidates (setting up");
  const auto compiling = r.err.find("compiling ");
  const auto first = r.err.find("[1/6]");
  const auto retiming = r.err.find("re-timing up to ");
  const auto last = r.err.find("[6/6]");
  REQUIRE(setup != std::string::npos);
  REQUIRE(compiling != std::string::npos);
  REQUIRE(retiming != std::string::npos);
  CHECK(setup < compiling);
  CHECK(compiling < first);
  CHECK(last < retiming);
  CHECK_THAT(r.err, Catch::Contains("candidates ahead (0 compiled so far, 0/6 evaluated"));
}
