// Search spaces: exact counts against brute force, pruning, order, is_valid.
#include "generator/search_space.hpp"

#include <limits>
#include <map>

#include <catch2/catch.hpp>

#include "generator/cartesian_size.hpp"
#include "generator/gemm_operator.hpp"
#include "tests/generator/generator_fixtures.hpp"

using kforge::Config;
using kforge::SearchSpace;
using kforge::TemplateManifest;
using nlohmann::json;

namespace {

const kforge::GemmOperator kGemm;

/// A: 4 values, B: 4 values, C: 3 values; "A * B <= 8" prunes at depth 1
/// (after B), "(A + B + C) % 2 == 0" at depth 2.
json small_manifest() {
  json j = kforge::test::gemm_manifest_json();
  j["parameters"] = json::parse(R"([
    {"name": "A", "values": [1, 2, 3, 4], "default": 1},
    {"name": "B", "values": [1, 2, 4, 8], "default": 1},
    {"name": "C", "values": [1, 2, 3], "default": 2}
  ])");
  j["constraints"] = {"A * B <= 8", "(A + B + C) % 2 == 0"};
  j["envelope"] = json::array();
  j["launch"] = json::parse(R"({"block": ["1", "1", "1"], "grid": ["1", "1", "1"]})");
  j.erase("local_memory_bytes");
  return j;
}

TemplateManifest parse(const json& j) {
  auto m = kforge::test::parse_manifest(j);
  if (!m) FAIL(m.error().message);
  return std::move(m).value();
}

kforge::Problem problem(std::int64_t m = 256, std::int64_t n = 256, std::int64_t k = 256) {
  kforge::Problem p;
  p.op = "gemm";
  p.dims = {{"M", m}, {"N", n}, {"K", k}};
  return p;
}

Config config(std::int64_t a, std::int64_t b, std::int64_t c) {
  Config cfg;
  cfg.values = {{"A", a}, {"B", b}, {"C", c}};
  return cfg;
}

}  // namespace

TEST_CASE("search space: count and nodes match brute force", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  CHECK(space.cartesian_size() == 48);

  std::vector<Config> expected;
  std::uint64_t expected_nodes = 0;
  for (std::int64_t a : {1, 2, 3, 4}) {
    ++expected_nodes;
    for (std::int64_t b : {1, 2, 4, 8}) {
      ++expected_nodes;
      if (a * b > 8) continue;
      for (std::int64_t c : {1, 2, 3}) {
        ++expected_nodes;
        if ((a + b + c) % 2 == 0) expected.push_back(config(a, b, c));
      }
    }
  }
  const std::uint64_t full_nodes = 4 + 4 * 4 + 4 * 4 * 3;

  std::vector<Config> seen;
  auto stats = space.for_each([&](const Config& c) {
    seen.push_back(c);
    return true;
  });
  REQUIRE(stats.ok());
  CHECK(seen == expected);  // same order as the nested loops: declared order, value order
  CHECK(stats->valid == expected.size());
  CHECK(stats->valid == 17);
  CHECK(stats->nodes == expected_nodes);
  CHECK(stats->nodes < full_nodes);

  auto again = space.enumerate();
  REQUIRE(again.ok());
  CHECK(*again == expected);
}

TEST_CASE("search space: is_valid agrees with enumeration", "[search_space]") {
  json j = small_manifest();
  j["envelope"] = {"M % (A * 64) == 0"};  // reads a parameter: part of validity
  const TemplateManifest m = parse(j);
  SearchSpace space(m, kGemm, problem(128), kforge::DeviceLimits::baseline());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  CHECK_FALSE(all->empty());
  std::size_t valid = 0;
  for (std::int64_t a : {1, 2, 3, 4}) {
    for (std::int64_t b : {1, 2, 4, 8}) {
      for (std::int64_t c : {1, 2, 3}) {
        const Config cfg = config(a, b, c);
        auto v = space.is_valid(cfg);
        REQUIRE(v.ok());
        const bool listed = std::find(all->begin(), all->end(), cfg) != all->end();
        CHECK(*v == listed);
        const bool brute = a * b <= 8 && (a + b + c) % 2 == 0 && 128 % (a * 64) == 0;
        CHECK(*v == brute);
        valid += brute;
      }
    }
  }
  CHECK(all->size() == valid);
  // Undeclared values and missing parameters are simply not valid.
  CHECK_FALSE(*space.is_valid(config(5, 1, 1)));
  Config partial;
  partial.values = {{"A", 1}};
  CHECK_FALSE(*space.is_valid(partial));
}

TEST_CASE("search space: constraints on the problem alone", "[search_space]") {
  json j = small_manifest();
  j["constraints"].push_back("M >= 128");
  const TemplateManifest m = parse(j);
  SearchSpace big(m, kGemm, problem(256), kforge::DeviceLimits::baseline());
  SearchSpace small(m, kGemm, problem(64), kforge::DeviceLimits::baseline());
  auto s1 = big.for_each([](const Config&) { return true; });
  auto s2 = small.for_each([](const Config&) { return true; });
  REQUIRE(s1.ok());
  REQUIRE(s2.ok());
  CHECK(s1->valid == 17);
  CHECK(s2->valid == 0);
  CHECK(s2->nodes == 0);  // checked once, before anything is bound
  CHECK_FALSE(*small.is_valid(config(1, 1, 2)));
}

TEST_CASE("search space: device limits prune", "[search_space]") {
  json j = small_manifest();
  j["constraints"].push_back("A * B * C <= max_block_threads");
  const TemplateManifest m = parse(j);
  kforge::DeviceLimits tiny;
  tiny.max_block_threads = 4;
  SearchSpace space(m, kGemm, problem(), tiny);
  auto all = space.enumerate();
  REQUIRE(all.ok());
  std::vector<Config> expected;
  for (std::int64_t a : {1, 2, 3, 4}) {
    for (std::int64_t b : {1, 2, 4, 8}) {
      for (std::int64_t c : {1, 2, 3}) {
        if (a * b <= 8 && (a + b + c) % 2 == 0 && a * b * c <= 4) {
          expected.push_back(config(a, b, c));
        }
      }
    }
  }
  CHECK(*all == expected);
  CHECK(all->size() == 5);
}

TEST_CASE("search space: the visitor can stop early", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  int calls = 0;
  auto stats = space.for_each([&](const Config&) { return ++calls < 3; });
  REQUIRE(stats.ok());
  CHECK(calls == 3);
  CHECK(stats->valid == 3);
}

TEST_CASE("search space: unsupported dtype or layout is an empty space", "[search_space]") {
  json j = small_manifest();
  j["layouts"] = {"NN"};
  const TemplateManifest m = parse(j);
  kforge::Problem p = problem();
  p.layout = kforge::Layout{true, true};
  SearchSpace space(m, kGemm, p, kforge::DeviceLimits::baseline());
  auto all = space.enumerate();
  REQUIRE(all.ok());
  CHECK(all->empty());
  p.layout = kforge::Layout{};
  p.dtype = kforge::Dtype::kBF16;
  SearchSpace bf16(m, kGemm, p, kforge::DeviceLimits::baseline());
  CHECK(bf16.enumerate()->empty());
}

TEST_CASE("search space: evaluation errors name the field and the partial configuration", "[search_space]") {
  json j = small_manifest();
  j["constraints"].push_back("4 % (A - 3) == 0");  // fine for the default A = 1
  const TemplateManifest m = parse(j);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  auto all = space.enumerate();
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().code == kforge::ErrorCode::kBadInput);
  CHECK(all.error().message ==
        "t/manifest.json: constraints[2]: position 2: division by zero (configuration A3 on "
        "gemm/K=256,M=256,N=256,batch=1/f32/NN)");
  auto v = space.is_valid(config(3, 1, 2));
  REQUIRE_FALSE(v.ok());
  CHECK_THAT(v.error().message, Catch::StartsWith("t/manifest.json: constraints[2]: position 2"));
}

TEST_CASE("search space: a bad problem is an error", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  kforge::Problem p = problem();
  p.dims.erase("K");
  SearchSpace space(m, kGemm, p, kforge::DeviceLimits::baseline());
  auto all = space.enumerate();
  REQUIRE_FALSE(all.ok());
  CHECK_THAT(all.error().message, Catch::Contains("K"));
}

TEST_CASE("search space: env_for holds problem, device and configuration", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  kforge::DeviceLimits limits;
  limits.simd_width = 32;
  SearchSpace space(m, kGemm, problem(100, 200, 300), limits);
  kforge::Env env = space.env_for(config(1, 2, 3));
  CHECK(env.at("M") == 100);
  CHECK(env.at("K") == 300);
  CHECK(env.at("batch") == 1);
  CHECK(env.at("simd_width") == 32);
  CHECK(env.at("B") == 2);
}

TEST_CASE("search space: the device's shared memory with opt-in is max_shared_bytes", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  kforge::DeviceLimits limits;
  limits.local_mem_bytes = 48 * 1024;
  limits.max_shared_bytes = 227 * 1024;
  kforge::Env env = SearchSpace(m, kGemm, problem(100, 200, 300), limits).env_for(config(1, 2, 3));
  CHECK(env.at("local_mem_bytes") == 48 * 1024);
  CHECK(env.at("max_shared_bytes") == 227 * 1024);
  // The baseline a manifest's default configuration is checked on: OpenCL 1.2's 32 KiB.
  CHECK(kforge::DeviceLimits::baseline().max_shared_bytes == 32768);
}

TEST_CASE("search space: large products are never materialized", "[search_space]") {
  json j = small_manifest();
  json params = json::array();
  std::vector<std::int64_t> values;
  for (int v = 0; v < 100; ++v) values.push_back(v);
  for (const char* name : {"A", "B", "C", "D", "E", "F", "G", "H"}) {
    params.push_back({{"name", name}, {"values", values}, {"default", 0}});
  }
  j["parameters"] = params;
  j["constraints"] = {"A + B <= 1", "C == A", "D == B", "E == C", "F == D", "G + H == 0"};
  const TemplateManifest m = parse(j);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  CHECK(space.cartesian_size() == 10000000000000000ull);
  auto stats = space.for_each([](const Config&) { return true; });
  REQUIRE(stats.ok());
  CHECK(stats->valid == 3);
  CHECK(stats->nodes == 100 + 100 * 100 + 3 * 100 * 5 + 3 * 100 * 100);  // A, B, C-G, H
}

namespace {

/// small_manifest with `extra` 0/1 parameters XA, XB, ... after A, B, C
/// (names are letters only: a parameter name never ends in a digit).
json with_binary_parameters(int extra) {
  json j = small_manifest();
  for (int i = 0; i < extra; ++i) {
    const std::string name = std::string("X") + static_cast<char>('A' + i / 26) + static_cast<char>('A' + i % 26);
    j["parameters"].push_back({{"name", name}, {"values", {0, 1}}, {"default", 0}});
  }
  return j;
}

}  // namespace

TEST_CASE("search space: cartesian sizes past 64 bits are exact and flagged", "[search_space]") {
  const TemplateManifest small = parse(small_manifest());
  const auto s = kforge::cartesian_size(small);
  CHECK(s.value == 48);
  CHECK_FALSE(s.overflows);
  CHECK(s.decimal == "48");
  // 48 * 2^64: the 64-bit product wraps to 0.
  const TemplateManifest wide = parse(with_binary_parameters(64));
  const auto w = kforge::cartesian_size(wide);
  CHECK(w.overflows);
  CHECK(w.value == std::numeric_limits<std::uint64_t>::max());
  CHECK(w.decimal == "885443715538058477568");
  SearchSpace space(wide, kGemm, problem(), kforge::DeviceLimits::baseline());
  CHECK(space.cartesian_size() == std::numeric_limits<std::uint64_t>::max());
  const auto exact = kforge::cartesian_size(parse(with_binary_parameters(16)));
  CHECK(exact.value == 48ull << 16);
  CHECK(exact.decimal == "3145728");
}

TEST_CASE("search space: counting stops at a valid or node limit and stores nothing", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  const auto all = space.enumerate();
  REQUIRE(all.ok());
  const auto n = static_cast<std::uint64_t>(all->size());
  auto exact = space.count_at_most(n, 1000);
  REQUIRE(exact.ok());
  CHECK(exact->complete);
  CHECK(exact->valid == n);
  auto over = space.count_at_most(n - 1, 1000);
  REQUIRE(over.ok());
  CHECK_FALSE(over->complete);
  auto few_nodes = space.count_at_most(1000, 5);
  REQUIRE(few_nodes.ok());
  CHECK_FALSE(few_nodes->complete);
  CHECK(few_nodes->nodes == 5);

  // 48 * 2^64 configurations: the count gives up after its node limit.
  const TemplateManifest wide = parse(with_binary_parameters(64));
  SearchSpace huge(wide, kGemm, problem(), kforge::DeviceLimits::baseline());
  auto bounded = huge.count_at_most(1u << 16, 1u << 20);
  REQUIRE(bounded.ok());
  CHECK_FALSE(bounded->complete);
  CHECK(bounded->valid == (1u << 16) + 1);
}

TEST_CASE("search space: samples are valid, uniform and reproducible", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  const auto all = space.enumerate();
  REQUIRE(all.ok());
  std::map<std::string, int> hits;
  for (const auto& c : *all) hits[c.canonical_name()] = 0;
  std::uint64_t state = 7;
  const kforge::UniformBelow below = [&](std::uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  const int draws = 200 * static_cast<int>(all->size());
  for (int i = 0; i < draws; ++i) {
    auto c = space.sample(below, 1000);
    REQUIRE(c.ok());
    REQUIRE(hits.count(c->canonical_name()) == 1);  // only valid configurations
    ++hits[c->canonical_name()];
  }
  for (const auto& [name, count] : hits) {  // each near 200: uniform over the valid ones
    CHECK(count > 120);
    CHECK(count < 280);
  }
}

TEST_CASE("search space: a sample of an almost empty space is refused after its tries", "[search_space]") {
  json j = with_binary_parameters(20);
  for (std::size_t i = 3; i < j["parameters"].size(); ++i) j["parameters"][i]["default"] = 1;
  j["constraints"].push_back("XAA + XAB + XAC + XAD + XAE + XAF + XAG + XAH + XAI + XAJ == 10");
  j["constraints"].push_back("XAK + XAL + XAM + XAN + XAO + XAP + XAQ + XAR + XAS + XAT == 10");
  const TemplateManifest m = parse(j);
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  std::uint64_t calls = 0;
  auto c = space.sample(
      [&](std::uint64_t) {
        ++calls;
        return std::uint64_t{0};
      },
      50);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message.find("t/manifest.json") != std::string::npos);
  CHECK(c.error().message.find("rejected all 50") != std::string::npos);
  CHECK(calls == 50 * m.parameters.size());
}

TEST_CASE("search space: neighbors differ in one parameter and are valid", "[search_space]") {
  const TemplateManifest m = parse(small_manifest());
  SearchSpace space(m, kGemm, problem(), kforge::DeviceLimits::baseline());
  // A*B <= 8 and A+B+C even: from A2 B2 C2, A4 (B2 C2) and B4 (A2 C2) hold;
  // A1/A3 and B1/B8 break parity or the product, C1/C3 break parity.
  auto near = space.neighbors(config(2, 2, 2));
  REQUIRE(near.ok());
  std::vector<std::string> names;
  for (const auto& c : *near) names.push_back(c.canonical_name());
  CHECK(names == std::vector<std::string>{"A4_B2_C2", "A2_B4_C2"});
}
