// What the lookup never selects: stale entries (with one warning), templates
// whose envelope or architecture guard fails for the problem, and tampered
// database entries (with one warning); the next rule applies instead.
#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

TEST_CASE("stale entries are never selected, explain and one warning say so", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);

  // The same template, edited after tuning: its hash changes.
  const auto edited = dir.path() / "edited";
  std::filesystem::copy(kPlanted, edited);
  const auto src = (edited / "gemm_naive_planted.c").string();
  write_file(src, read_file(src) + "\n// edited after tuning\n");

  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with({edited.string()}));
  for (const Problem& p : {gemm(33, 17, 9), gemm(66, 17, 9), gemm(33, 17, 18)}) {
    const Selection sel = select_ok(*lookup, p);
    CHECK(sel.rule == SelectionRule::kDefault);
    CHECK(sel.template_name == "gemm_simt_tiled");
    CHECK_THAT(sel.explanation, Catch::Contains("gemm_naive_planted"));
    CHECK_THAT(sel.explanation, Catch::Contains(": stale: recorded under template hash"));
  }
  REQUIRE(w.seen.size() == 1);  // three selections met the stale entries: one warning
  CHECK_THAT(w.seen[0], Catch::Contains(db + ": entries of template gemm_naive_planted"));
  CHECK_THAT(w.seen[0], Catch::Contains("are stale"));

  // Reverting the template revives its entries.
  auto reverted = open_lookup(w.options(db), **device, catalog_with());
  CHECK(select_ok(*reverted, gemm(33, 17, 9)).rule == SelectionRule::kExact);
}

TEST_CASE("a template whose envelope fails for the problem is never selected", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  // A variant of the planted template that only accepts even M.
  const std::string even = planted_variant(dir, "gemm_naive_even", "\"envelope\": []",
                                           "\"envelope\": [\"M % 2 == 0\"]");
  const std::string db = dir.file("k.db");
  const auto catalog = catalog_with({even});
  tune_into(db, **device, catalog, "gemm_naive_even", gemm(32, 17, 9));

  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with({even}));
  CHECK(select_ok(*lookup, gemm(64, 17, 9)).rule == SelectionRule::kNearest);  // even: fits
  const Selection odd = select_ok(*lookup, gemm(33, 17, 9));    // odd: the envelope fails
  CHECK(odd.rule == SelectionRule::kDefault);
  CHECK(odd.template_name == "gemm_simt_tiled");
  CHECK_THAT(odd.explanation, Catch::Contains("skipped nearest candidate gemm_naive_even"));
  CHECK_THAT(odd.explanation, Catch::Contains("constraints or envelope"));
  check_launch(*lookup, **device, odd);

  // As an override too: obeyed where it fits, passed over where it does not.
  REQUIRE(lookup->set_override("gemm", "gemm_naive_even", "BX8_BY4_FLAW0").ok());
  CHECK(select_ok(*lookup, gemm(64, 17, 9)).rule == SelectionRule::kOverride);
  const Selection passed = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(passed.rule == SelectionRule::kDefault);
  CHECK_THAT(passed.explanation, Catch::Contains("cannot run this problem"));
  CHECK(w.count("cannot run " + gemm(33, 17, 9).key()) == 1);
  CHECK(w.seen.size() == 1);
}

TEST_CASE("a template whose architecture guard fails is never selected", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  // The tuned entries, relabelled as a template that requires sm_90 (this
  // OpenCL device is not a CUDA sm_90 device, so its guard fails).
  const std::string guarded = planted_variant(dir, "gemm_naive_sm90", "\"dtypes\"",
                                              "\"arch_guard\": [\"sm_90\"],\n  \"dtypes\"");
  const auto catalog = catalog_with({kPlanted, guarded});
  const std::string hash = catalog.find("gemm_naive_sm90")->hash(prelude_text((*device)->info().backend));
  exec_sql(db, "INSERT INTO templates (name, op, hash, manifest_json, created_at) VALUES "
               "('gemm_naive_sm90', 'gemm', '" + hash + "', '', '2024-01-01T00:00:00Z')");
  exec_sql(db, "UPDATE winners SET template_id = (SELECT id FROM templates WHERE name = 'gemm_naive_sm90')");

  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with({kPlanted, guarded}));
  const Selection s = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(s.rule == SelectionRule::kDefault);
  CHECK(s.template_name == "gemm_simt_tiled");
  CHECK_THAT(s.explanation, Catch::Contains("skipped exact candidate gemm_naive_sm90"));
  CHECK_THAT(s.explanation, Catch::Contains("guard: gemm_naive_sm90 requires sm_90"));
  // Nor as an override, nor as a default.
  REQUIRE(lookup->set_override("gemm", "gemm_naive_sm90", "BX8_BY4_FLAW0").ok());
  const Selection o = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(o.rule == SelectionRule::kDefault);
  CHECK(o.template_name == "gemm_simt_tiled");
  CHECK_THAT(o.explanation, Catch::Contains("requires sm_90"));
}

TEST_CASE("a tampered database entry is rejected before any source is generated", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);

  const std::string tampered = GENERATE(std::string("BX9_BY4_FLAW0"),            // undeclared value
                                        std::string("BX8_BY4_FLAW0_EVIL1"),      // undeclared parameter
                                        std::string("BX8_BY4_FLAW0);\n#error"),  // code through a define
                                        std::string("BX8_BY4"),                  // missing parameter
                                        std::string(""));                        // nothing
  exec_sql(db, "UPDATE winners SET config = '" + tampered + "'");
  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with());
  for (const Problem& p : {gemm(33, 17, 9), gemm(66, 17, 9)}) {
    const Selection sel = select_ok(*lookup, p);
    INFO(sel.explanation);
    CHECK(sel.rule == SelectionRule::kDefault);
    CHECK(sel.config != tampered);
    CHECK_THAT(sel.explanation, Catch::Contains("invalid configuration"));
    check_launch(*lookup, **device, sel);
  }
  REQUIRE(w.seen.size() == 1);
  CHECK_THAT(w.seen[0], Catch::Contains("ignoring an entry of template gemm_naive_planted"));
  CHECK(w.seen[0].find('\n') == std::string::npos);

  // A hand-made selection carrying the tampered text cannot be compiled either.
  Selection forged = select_ok(*lookup, gemm(33, 17, 9));
  forged.template_name = "gemm_naive_planted";
  forged.config = tampered;
  auto prepared = lookup->prepare(forged);
  REQUIRE_FALSE(prepared.ok());
  CHECK(prepared.error().code == ErrorCode::kBadInput);
}

TEST_CASE("a launch is checked against the operator's arguments before it runs", "[lookup][opencl][launch]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(dir.file("none.db")), **device, catalog_with({}));
  Problem p = gemm(64, 32, 16);
  p.epilogue.bias = true;  // bias is read: its size counts
  const Selection sel = select_ok(*lookup, p);
  GemmOperator op;
  Workload wl = op.make_workload(sel.problem, 3, WorkloadKind::kPoisonedOutput);
  std::vector<std::unique_ptr<Buffer>> bufs;
  for (const auto& t : wl.tensors) bufs.push_back(std::move((*device)->allocate(t.bytes.size()).value()));
  auto short_bias = std::move((*device)->allocate(16).value());
  std::vector<KernelArg> args;
  for (const auto& a : wl.args) {
    if (a.kind == OperatorArg::Kind::kTensor)
      args.push_back(KernelArg::of(*bufs[a.tensor]));
    else if (a.kind == OperatorArg::Kind::kInt32)
      args.push_back(KernelArg::of(a.i32));
    else
      args.push_back(KernelArg::of(a.f32));
  }
  args[8] = KernelArg::of(*short_bias);
  auto launched = lookup->launch(sel, args);
  REQUIRE_FALSE(launched.ok());
  CHECK(launched.error().code == ErrorCode::kBadInput);
  CHECK(launched.error().message ==
        "gemm launch: argument 8 (bias) needs 32 elements of f32, 128 bytes; the buffer holds 16 bytes");
  args.pop_back();
  launched = lookup->launch(sel, args);
  REQUIRE_FALSE(launched.ok());
  CHECK_THAT(launched.error().message, Catch::StartsWith("gemm launch: 8 arguments given, gemm takes 9"));
}
