// Coverage of the *_vector_row templates, whose row must fit in registers:
// each problem runs on the family's configuration (TX, RY, VW fixed) with
// the fewest chunks per thread (NV) its constraints admit, so one family
// covers rows from 1 element to the envelope's limit.
#pragma once

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "generator/search_space.hpp"
#include "tests/runtime/coverage_runner.hpp"

namespace kforge::test {

/// `family` ("RY2_TX32_VW4") with the smallest NV valid for `p`, or "" when
/// none is (the row is too long for the family, or outside the envelope).
inline std::string vector_row_config(const std::string& template_name, const Operator& op,
                                     const std::string& family, const Problem& p) {
  const TemplateSource& tpl = builtin_template(template_name);
  SearchSpace space(tpl.manifest, op, p, coverage_device().info().limits());
  auto blocked = space.failed_problem_check();
  REQUIRE(blocked.ok());
  if (*blocked != nullptr) return "";
  for (int nv = 1; nv <= 32; nv *= 2) {
    auto c = Config::parse("NV" + std::to_string(nv) + "_" + family);
    REQUIRE(c.ok());
    auto valid = space.is_valid(*c);
    REQUIRE(valid.ok());
    if (*valid) return c->canonical_name();
  }
  return "";
}

/// Runs every problem the family holds, plain and accumulating, on its
/// configuration; the first failure, or "". `covered` counts the problems run.
inline std::string check_vector_row(const std::string& template_name, const Operator& op,
                                    const std::string& family, const std::vector<Problem>& problems,
                                    int& covered) {
  std::map<std::string, std::unique_ptr<CoverageRunner>> runners;
  for (const Problem& p : problems) {
    const std::string config = vector_row_config(template_name, op, family, p);
    if (config.empty()) continue;
    auto& runner = runners[config];
    if (!runner) runner = std::make_unique<CoverageRunner>(template_name, config);
    for (auto run : {WorkloadKind::kPoisonedOutput, WorkloadKind::kAccumulate}) {
      const std::string failure = runner->run(p, run);
      if (!failure.empty()) return failure;
    }
    ++covered;
  }
  return "";
}

}  // namespace kforge::test
