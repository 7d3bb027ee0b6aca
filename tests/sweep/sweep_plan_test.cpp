// Sweep plans: expansion order and budgets, one exact one-line error per
// class of bad input, and shards that cover a plan exactly once.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "generator/operator.hpp"
#include "sweep/sweep_plan.hpp"
#include "tuner/search/strategy_default.hpp"

using namespace kforge;

namespace {

/// A plan with one entry made of `entry` (JSON object members) and an optional plan-level budget.
std::string plan_with(const std::string& entry, const std::string& budget = "") {
  return R"({"schema_version": 1, )" + (budget.empty() ? "" : R"("budget": )" + budget + ", ") +
         R"("entries": [{)" + entry + "}]}";
}

std::string error_of(const std::string& text) {
  auto p = parse_sweep_plan(text, "plan.json");
  if (p.ok()) return "(parsed)";
  CHECK(p.error().code == ErrorCode::kBadInput);
  CHECK(p.error().message.find('\n') == std::string::npos);
  return p.error().message;
}

const char* kGemm = R"("op": "gemm", "shapes": ["M=8,N=8,K=8"])";

}  // namespace

TEST_CASE("A plan expands entries in order: shapes x dtypes x layouts x epilogues x attrs", "[unit][sweep]") {
  const std::string text = R"({
    "schema_version": 1,
    "name": "tiny",
    "description": "two operators",
    "budget": {"strategy": "random", "max_evals": 4, "seed": 7, "min_reps": 2, "max_reps": 3},
    "entries": [
      {"op": "gemm", "shapes": ["M=1,N=64,K=32", {"M": 16, "N": 64, "K": 32}], "dtypes": ["f32", "f16"],
       "layouts": ["NN", "NT"], "epilogues": ["none", "bias+relu"]},
      {"op": "reduce", "shapes": "rows=4,cols=128", "attrs": ["kind=sum", {"kind": "max"}],
       "budget": {"max_evals": 2, "strategy": "exhaustive", "time_budget_s": 1.5, "no_improvement": 3,
                  "warm_start": 2}}
    ]})";
  auto parsed = parse_sweep_plan(text, "plan.json");
  INFO((parsed.ok() ? "" : parsed.error().message));
  REQUIRE(parsed.ok());
  const SweepPlan& plan = *parsed;
  CHECK(plan.name == "tiny");
  REQUIRE(plan.tasks.size() == 2 * 2 * 2 * 2 + 2);
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) CHECK(plan.tasks[i].index == i);
  CHECK(plan.tasks[0].key == "gemm/K=32,M=1,N=64,batch=1/f32/NN");
  CHECK(plan.tasks[1].key == "gemm/K=32,M=1,N=64,batch=1/f32/NN/bias+relu");
  CHECK(plan.tasks[2].key == "gemm/K=32,M=1,N=64,batch=1/f32/NT");
  CHECK(plan.tasks[4].key == "gemm/K=32,M=1,N=64,batch=1/f16/NN");
  CHECK(plan.tasks[8].key == "gemm/K=32,M=16,N=64,batch=1/f32/NN");
  CHECK(plan.tasks[15].key == "gemm/K=32,M=16,N=64,batch=1/f16/NT/bias+relu");
  CHECK(plan.tasks[16].key == "reduce/cols=128,rows=4/f32/NN/axis=last,kind=sum");
  CHECK(plan.tasks[17].key == "reduce/cols=128,rows=4/f32/NN/axis=last,kind=max");
  CHECK(plan.tasks[5].dtype_path == "entries[0].dtypes[1]");
  CHECK(plan.tasks[2].layout_path == "entries[0].layouts[1]");
  CHECK(plan.tasks[16].layout_path == "entries[1]");
  CHECK(plan.tasks[16].entry == "entries[1]");

  SweepBudget plan_budget;
  plan_budget.strategy = "random";
  plan_budget.max_evals = 4;
  plan_budget.seed = 7;
  plan_budget.min_reps = 2;
  plan_budget.max_reps = 3;
  CHECK(plan.budget == plan_budget);
  CHECK(plan.tasks[0].budget == plan_budget);
  SweepBudget entry_budget = plan_budget;  // overridden field by field
  entry_budget.max_evals = 2;
  entry_budget.strategy = "exhaustive";
  entry_budget.time_budget_s = 1.5;
  entry_budget.no_improvement = 3;
  entry_budget.warm_start = 2;
  CHECK(plan.tasks[17].budget == entry_budget);

  std::set<std::string> keys;
  for (const auto& t : plan.tasks) keys.insert(t.key);
  CHECK(keys.size() == plan.tasks.size());
}

TEST_CASE("Defaults: f32, NN, no epilogue, the operator's attributes, tune's budget", "[unit][sweep]") {
  auto plan = parse_sweep_plan(plan_with(R"("op": "softmax", "shapes": [{"rows": 2, "cols": 16}])"), "p.json");
  REQUIRE(plan.ok());
  REQUIRE(plan->tasks.size() == 1);
  CHECK(plan->tasks[0].key == "softmax/cols=16,rows=2/f32/NN");
  CHECK(plan->tasks[0].budget == SweepBudget{});
  CHECK(plan->tasks[0].dtype_path == "entries[0]");
}

TEST_CASE("A budget without a strategy runs tune's default for its size", "[unit][sweep]") {
  auto whole = parse_sweep_plan(plan_with(kGemm), "p.json");
  REQUIRE(whole.ok());
  CHECK(whole->tasks[0].budget.strategy.empty());
  CHECK(whole->tasks[0].budget.strategy_to_run() == "random");  // the whole space: the order only
  for (int evals : {10, 25, 100}) {
    auto plan = parse_sweep_plan(plan_with(kGemm, R"({"max_evals": )" + std::to_string(evals) + "}"), "p.json");
    REQUIRE(plan.ok());
    CHECK(plan->tasks[0].budget.strategy_to_run() == default_strategy(evals));
  }
  CHECK(default_strategy(25) == "model");
  auto named = parse_sweep_plan(plan_with(kGemm, R"({"max_evals": 25, "strategy": "random"})"), "p.json");
  REQUIRE(named.ok());
  CHECK(named->tasks[0].budget.strategy_to_run() == "random");
}

TEST_CASE("Every bad field is one line naming the file, the JSON path and the value", "[unit][sweep]") {
  std::string known_ops;
  for (const auto* op : all_operators()) known_ops += (known_ops.empty() ? "" : ", ") + std::string(op->name());

  SECTION("file and document") {
    CHECK(error_of("{").rfind("plan.json: JSON syntax error at byte ", 0) == 0);
    CHECK(error_of("[1]") == "plan.json: a sweep plan is a JSON object, got [1]");
    CHECK(error_of(R"({"entries": []})") == "plan.json: schema_version: missing (this kforge reads 1)");
    CHECK(error_of(R"({"schema_version": 2, "entries": []})") ==
          "plan.json: schema_version: 2 was written by a newer kforge (this one reads 1)");
    CHECK(error_of(R"({"schema_version": "1", "entries": []})") ==
          "plan.json: schema_version: \"1\" is not a version (this kforge reads 1)");
    CHECK(error_of(R"({"schema_version": 1})") == "plan.json: entries: missing");
    CHECK(error_of(R"({"schema_version": 1, "entries": []})") == "plan.json: entries: [] plans nothing");
    CHECK(error_of(R"({"schema_version": 1, "entries": {}})") == "plan.json: entries: {} is not an array");
    CHECK(error_of(R"({"schema_version": 1, "name": 3, "entries": [{}]})") == "plan.json: name: 3 is not a string");
    auto missing = load_sweep_plan("/nonexistent/plan.json");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::kBadInput);
    CHECK(missing.error().message == "/nonexistent/plan.json: cannot read the sweep plan (missing or unreadable)");
  }
  SECTION("unknown keys") {
    CHECK(error_of(R"({"schema_version": 1, "entrys": [], "entries": [{}]})") ==
          "plan.json: entrys: unknown key (known: schema_version, name, description, budget, entries)");
    CHECK(error_of(plan_with(R"("op": "gemm", "shape": "M=1")")) ==
          "plan.json: entries[0].shape: unknown key (known: op, shapes, dtypes, layouts, epilogues, attrs, budget)");
    CHECK(error_of(plan_with(kGemm, R"({"max_eval": 3})")) ==
          "plan.json: budget.max_eval: unknown key (known: strategy, max_evals, time_budget_s, no_improvement, seed, "
          "min_reps, max_reps, warm_start)");
  }
  SECTION("operators") {
    CHECK(error_of(plan_with(R"("shapes": ["M=1"])")) == "plan.json: entries[0].op: missing");
    CHECK(error_of(plan_with(R"("op": "conv", "shapes": ["M=1"])")) ==
          "plan.json: entries[0].op: unknown operator \"conv\" (known: " + known_ops + ")");
    CHECK(error_of(R"({"schema_version": 1, "entries": [3]})") == "plan.json: entries[0]: 3 is not an object");
  }
  SECTION("shapes and dimensions") {
    CHECK(error_of(plan_with(R"("op": "gemm")")) == "plan.json: entries[0].shapes: missing");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": [])")) == "plan.json: entries[0].shapes: [] is empty");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": ["M=8,N=8,K=8", "M=4,N=4"])")) ==
          "plan.json: entries[0].shapes[1]: \"M=4,N=4\": gemm: dimension K is missing");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": ["M=8,N=8,K=8,Q=2"])")) ==
          "plan.json: entries[0].shapes[0]: \"M=8,N=8,K=8,Q=2\": gemm: unknown dimension 'Q' (gemm reads M, N, K, "
          "batch)");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": [{"M": 8, "N": 0, "K": 8}])")) ==
          "plan.json: entries[0].shapes[0].N: 0 is not a positive integer");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": [{"M": 8, "N": "big", "K": 8}])")) ==
          "plan.json: entries[0].shapes[0].N: \"big\" is not a positive integer");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": [12])")) ==
          "plan.json: entries[0].shapes[0]: 12 is not a shape (\"M=64,N=64,K=64\" or {\"M\": 64, ...})");
    CHECK(error_of(plan_with(R"("op": "gemm", "shapes": ["M=x,N=8,K=8"])"))
              .rfind("plan.json: entries[0].shapes[0]: shape 'M=x,N=8,K=8': ", 0) == 0);
  }
  SECTION("dtypes, layouts, epilogues and attributes for the operator") {
    CHECK(error_of(plan_with(std::string(kGemm) + R"(, "dtypes": ["f32", "f64"])")) ==
          "plan.json: entries[0].dtypes[1]: unknown dtype \"f64\" (f32, f16, bf16)");
    CHECK(error_of(plan_with(std::string(kGemm) + R"(, "layouts": ["NX"])")) ==
          "plan.json: entries[0].layouts[0]: unknown layout \"NX\" (NN, NT, TN, TT)");
    CHECK(error_of(plan_with(R"("op": "softmax", "shapes": ["rows=2,cols=8"], "layouts": ["NN", "NT"])")) ==
          "plan.json: entries[0].layouts[1]: \"NT\": softmax: layout NT is not supported (softmax reads NN only)");
    CHECK(error_of(plan_with(std::string(kGemm) + R"(, "epilogues": ["tanh"])"))
              .rfind("plan.json: entries[0].epilogues[0]: epilogue 'tanh': ", 0) == 0);
    CHECK(error_of(plan_with(R"("op": "softmax", "shapes": ["rows=2,cols=8"], "epilogues": ["relu"])"))
              .rfind("plan.json: entries[0].epilogues[0]: \"relu\": softmax: epilogue 'relu' is not supported", 0) == 0);
    CHECK(error_of(plan_with(R"("op": "reduce", "shapes": ["rows=2,cols=8"], "attrs": ["kind=median"])"))
              .rfind("plan.json: entries[0].attrs[0]: \"kind=median\": reduce: attribute kind = 'median' is not one of",
                     0) == 0);
    CHECK(error_of(plan_with(R"("op": "reduce", "shapes": ["rows=2,cols=8"], "attrs": [{"kind": 1}])")) ==
          "plan.json: entries[0].attrs[0].kind: 1 is not a string");
  }
  SECTION("budgets") {
    CHECK(error_of(plan_with(kGemm, R"({"max_evals": -1})")) == "plan.json: budget.max_evals: -1 is less than 0");
    CHECK(error_of(plan_with(kGemm, R"({"max_evals": 2.5})")) == "plan.json: budget.max_evals: 2.5 is not an integer");
    CHECK(error_of(plan_with(kGemm, R"({"time_budget_s": -3})")) ==
          "plan.json: budget.time_budget_s: -3 is not a number of seconds >= 0");
    CHECK(error_of(plan_with(kGemm, R"({"seed": -1})")) == "plan.json: budget.seed: -1 is not an integer >= 0");
    CHECK(error_of(plan_with(kGemm, R"({"min_reps": 0})")) == "plan.json: budget.min_reps: 0 is less than 1");
    CHECK(error_of(plan_with(kGemm, R"({"warm_start": -2})")) == "plan.json: budget.warm_start: -2 is less than 0");
    CHECK(error_of(plan_with(kGemm, R"({"min_reps": 5, "max_reps": 3})")) ==
          "plan.json: budget.max_reps: max_reps 3 is less than min_reps 5");
    CHECK(error_of(plan_with(std::string(kGemm) + R"(, "budget": {"strategy": "greedy"})"))
              .rfind("plan.json: entries[0].budget.strategy: unknown strategy \"greedy\" (known: ", 0) == 0);
    CHECK(error_of(plan_with(std::string(kGemm) + R"(, "budget": 3)")) ==
          "plan.json: entries[0].budget: 3 is not an object");
  }
  SECTION("a problem planned twice") {
    CHECK(error_of(R"({"schema_version": 1, "entries": [
            {"op": "gemm", "shapes": ["M=8,N=8,K=8"]},
            {"op": "gemm", "shapes": [{"M": 8, "N": 8, "K": 8, "batch": 1}]}]})") ==
          "plan.json: entries[1]: problem gemm/K=8,M=8,N=8,batch=1/f32/NN is planned twice (also by entries[0])");
  }
}

TEST_CASE("The shard flag I/N is read strictly", "[unit][sweep]") {
  auto s = parse_shard("2/4");
  REQUIRE(s.ok());
  CHECK(s->index == 2);
  CHECK(s->count == 4);
  for (const char* bad : {"", "2", "0/4", "5/4", "1/0", "-1/2", "1/2/3", "a/b", "1 /2", "/2"}) {
    auto r = parse_shard(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == ErrorCode::kBadInput);
    CHECK(r.error().message ==
          "--shard: '" + std::string(bad) + "' is not I/N with 1 <= I <= N (e.g. 2/4)");
  }
}

TEST_CASE("Shards 1..N of a plan cover every task exactly once, N = 1..4", "[unit][sweep]") {
  const std::string text = R"({"schema_version": 1, "entries": [
      {"op": "gemm", "shapes": ["M=8,N=8,K=8", "M=16,N=8,K=8", "M=32,N=8,K=8"], "dtypes": ["f32", "f16"]},
      {"op": "softmax", "shapes": ["rows=2,cols=8", "rows=4,cols=8", "rows=8,cols=8"]},
      {"op": "reduce", "shapes": ["rows=2,cols=8"], "attrs": ["kind=sum", "kind=max"]}]})";
  auto plan = parse_sweep_plan(text, "plan.json");
  REQUIRE(plan.ok());
  REQUIRE(plan->tasks.size() == 11);
  for (int n = 1; n <= 4; ++n) {
    std::map<std::string, int> seen;
    std::size_t smallest = plan->tasks.size(), largest = 0;
    for (int i = 1; i <= n; ++i) {
      const auto share = shard_tasks(*plan, {i, n});
      smallest = std::min(smallest, share.size());
      largest = std::max(largest, share.size());
      std::size_t last = 0;
      for (std::size_t k = 0; k < share.size(); ++k) {
        ++seen[share[k].key];
        CHECK(in_shard(share[k], {i, n}));
        if (k > 0) CHECK(share[k].index > last);  // plan order kept
        last = share[k].index;
      }
    }
    INFO("N = " << n);
    CHECK(seen.size() == plan->tasks.size());
    for (const auto& [key, count] : seen) CHECK(count == 1);
    CHECK(largest - smallest <= 1);  // index mod N: balanced
  }
}

#ifdef KFORGE_SOURCE_DIR
TEST_CASE("The example plans in bench/plans parse", "[unit][sweep]") {
  for (const char* name : {"transformer.json", "tiny.json"}) {
    auto plan = load_sweep_plan(std::string(KFORGE_SOURCE_DIR) + "/bench/plans/" + name);
    INFO(name << ": " << (plan.ok() ? "" : plan.error().message));
    REQUIRE(plan.ok());
    CHECK_FALSE(plan->tasks.empty());
  }
}
#endif
