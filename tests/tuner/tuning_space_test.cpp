// Tuning spaces: a small space whole and in order, a large one sampled or cut
// to the budget, never materialized whole.
#include "tuner/tuning_space.hpp"

#include <catch2/catch.hpp>
#include <set>

#include "generator/gemm_operator.hpp"
#include "tests/generator/generator_fixtures.hpp"
#include "tuner/search/strategy.hpp"

using kforge::Config;
using kforge::SearchSpace;
using kforge::TemplateManifest;
using nlohmann::json;

namespace {

const kforge::GemmOperator kGemm;

/// The fixture gemm manifest (its valid space: 3 * 3 * 2 * 4 * 3 less the
/// tiles that do not divide) with `extra` 0/1 parameters XAA, XAB, ...
TemplateManifest manifest(int extra) {
  json j = kforge::test::gemm_manifest_json();
  for (int i = 0; i < extra; ++i) {
    const std::string name = std::string("X") + static_cast<char>('A' + i / 26) + static_cast<char>('A' + i % 26);
    j["parameters"].push_back({{"name", name}, {"values", {0, 1}}, {"default", 0}});
  }
  auto m = kforge::test::parse_manifest(j);
  if (!m) FAIL(m.error().message);
  return std::move(m).value();
}

kforge::Problem problem() {
  kforge::Problem p;
  p.op = "gemm";
  p.dims = {{"M", 256}, {"N", 256}, {"K", 256}};
  return p;
}

}  // namespace

TEST_CASE("tuning space: a small space is the whole enumeration, in order", "[tuning_space]") {
  const TemplateManifest m = manifest(2);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  for (const char* strategy : {"exhaustive", "random", "annealing", "model"}) {
    auto t = kforge::make_tuning_space(space, strategy, 0, {m.default_config()}, 1);
    REQUIRE(t.ok());
    CHECK(t->whole);
    CHECK(t->note.empty());
    CHECK(t->configs == space.enumerate().value());
  }
}

TEST_CASE("tuning space: a space of 2^64 times the fixture's is sampled, bounded", "[tuning_space]") {
  const TemplateManifest m = manifest(64);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  const Config def = m.default_config();
  for (const char* strategy : {"random", "annealing", "model"}) {
    auto t = kforge::make_tuning_space(space, strategy, 0, {def}, 3);
    REQUIRE(t.ok());
    CHECK_FALSE(t->whole);
    CHECK(t->note.find("more than 65536 valid configurations") != std::string::npos);
    CHECK(t->note.find("1024 drawn uniformly") != std::string::npos);
    // The sample, the default first, and for the local searches its neighbors.
    const std::size_t neighbors = std::string(strategy) == "random" ? 0 : space.neighbors(def)->size();
    CHECK(t->configs.size() == 1 + neighbors + 1024);
    CHECK(t->configs.front() == def);
    std::set<std::string> names;
    for (const auto& c : t->configs) {
      CHECK(space.is_valid(c).value());
      names.insert(c.canonical_name());
    }
    CHECK(names.size() == t->configs.size());
    // The same seed draws the same sample.
    CHECK(kforge::make_tuning_space(space, strategy, 0, {def}, 3)->configs == t->configs);
  }
  // A larger budget draws as many.
  auto big = kforge::make_tuning_space(space, "random", 3000, {def}, 3);
  REQUIRE(big.ok());
  CHECK(big->configs.size() == 3001);
}

TEST_CASE("tuning space: the strategies tune a sampled space", "[tuning_space]") {
  const TemplateManifest m = manifest(64);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  for (const char* strategy : {"random", "annealing", "model"}) {
    auto t = kforge::make_tuning_space(space, strategy, 0, {m.default_config()}, 5);
    REQUIRE(t.ok());
    kforge::SpaceFeatures features;
    for (const auto& c : t->configs) {
      std::vector<double> row;
      for (const auto& [name, value] : c.values) row.push_back(static_cast<double>(value));
      features.push_back(std::move(row));
    }
    auto s = kforge::make_strategy(strategy, features, std::size_t{0}, 5);
    REQUIRE(s.ok());
    std::vector<kforge::Observation> history;
    for (int i = 0; i < 12; ++i) {
      auto next = (*s)->next(history);
      REQUIRE(next);
      REQUIRE(*next < t->configs.size());
      history.push_back({*next, true, 1.0 + static_cast<double>(t->configs[*next].values.at("BM"))});
    }
    CHECK(history.front().index == 0);  // the default first
  }
}

TEST_CASE("tuning space: exhaustive on a large space needs a budget, then walks its order", "[tuning_space]") {
  const TemplateManifest m = manifest(16);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  auto refused = kforge::make_tuning_space(space, "exhaustive", 0, {m.default_config()}, 1);
  REQUIRE_FALSE(refused.ok());
  const std::string why = refused.error().message;
  CHECK(why.find("t/manifest.json: template gemm_test has more than 65536 valid configurations") != std::string::npos);
  CHECK(why.find("cartesian size 14155776") != std::string::npos);  // 216 * 2^16
  CHECK(why.find("--strategy random, annealing or model") != std::string::npos);
  CHECK(why.find("--max-evals") != std::string::npos);

  auto walked = kforge::make_tuning_space(space, "exhaustive", 5, {m.default_config()}, 1);
  REQUIRE(walked.ok());
  CHECK_FALSE(walked->whole);
  std::vector<Config> first;
  REQUIRE(space.for_each([&](const Config& c) {
    first.push_back(c);
    return first.size() < 5;
  }).ok());
  first.push_back(m.default_config());  // not among the first five: led by the strategy
  CHECK(walked->configs == first);
}

TEST_CASE("tuning space: constraints that reject every draw are named", "[tuning_space]") {
  json j = kforge::test::gemm_manifest_json();
  std::string sum;
  for (int i = 0; i < 40; ++i) {
    const std::string name = std::string("X") + static_cast<char>('A' + i / 26) + static_cast<char>('A' + i % 26);
    j["parameters"].push_back({{"name", name}, {"values", {0, 1}}, {"default", 1}});
    sum += (sum.empty() ? "" : " + ") + name;
  }
  j["constraints"].push_back(sum + " == 40");  // one setting of the 40 in 2^40 holds
  auto m = kforge::test::parse_manifest(j);
  if (!m) FAIL(m.error().message);
  SearchSpace space(*m, kGemm, problem(), kforge::DeviceLimits::baseline());
  kforge::TuningSpaceLimits limits;
  limits.max_nodes = 1u << 16;
  limits.max_tries = 1000;
  // With nothing to start from, the tune cannot go on.
  auto none = kforge::make_tuning_space(space, "random", 0, {}, 1, limits);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("t/manifest.json: template gemm_test: the constraints rejected all 1000") !=
        std::string::npos);
  CHECK(none.error().message.find("loosen the constraints") != std::string::npos);
  // With the default, it goes on over what it has, and says why.
  auto some = kforge::make_tuning_space(space, "random", 0, {m->default_config()}, 1, limits);
  REQUIRE(some.ok());
  CHECK(some->configs == std::vector<Config>{m->default_config()});
  CHECK(some->note.find("0 drawn uniformly") != std::string::npos);
  CHECK(some->note.find("sampling stopped") != std::string::npos);
}
