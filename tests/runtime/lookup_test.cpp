// The runtime lookup's selection chain, rule by rule and in order: override
// (API and environment), exact, nearest, same_arch, same_vendor, default.
#include <cstdlib>

#include "tests/runtime/lookup_fixtures.hpp"

using namespace kforge;
using namespace kforge::test;

TEST_CASE("exact, nearest and default rules", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with());

  const Selection exact = select_ok(*lookup, gemm(33, 17, 9));
  CHECK(exact.rule == SelectionRule::kExact);
  CHECK(exact.template_name == "gemm_naive_planted");
  CHECK_THAT(exact.config, Catch::Contains("FLAW0"));
  CHECK(exact.distance == 0);
  CHECK(exact.database == db);
  CHECK(exact.tuned_device == (*device)->info().name);
  CHECK_THAT(exact.explanation, Catch::Contains("\nexact: gemm_naive_planted"));
  check_launch(*lookup, **device, exact);

  // Twice M: log2 distance exactly 1.
  const Selection near = select_ok(*lookup, gemm(66, 17, 9));
  CHECK(near.rule == SelectionRule::kNearest);
  CHECK(near.tuned_problem == gemm(33, 17, 9).key());
  CHECK(near.distance == Approx(1.0));
  CHECK_THAT(near.explanation, Catch::Contains("exact: no usable entry"));
  check_launch(*lookup, **device, near);

  // Another layout is not comparable: nothing tuned, so the default.
  const Selection other_layout = select_ok(
      *lookup, Problem{"gemm", {{"M", 33}, {"N", 17}, {"K", 9}}, Dtype::kF32, *parse_layout("TT"), {}, {}});
  CHECK(other_layout.rule == SelectionRule::kDefault);
  CHECK(other_layout.template_name == "gemm_simt_tiled");  // built-in before user templates
  CHECK_THAT(other_layout.explanation, Catch::Contains("nearest: no usable tuned problem"));
  CHECK_THAT(other_layout.explanation, Catch::Contains("same_vendor: no usable entry"));
  check_launch(*lookup, **device, other_layout);

  auto none = open_lookup(w.options(dir.file("missing.db")), **device, catalog_with());
  const Selection def = select_ok(*none, gemm(33, 17, 9));
  CHECK(def.rule == SelectionRule::kDefault);
  CHECK_THAT(def.explanation, Catch::Contains("no user database at " + dir.file("missing.db")));
  CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
  CHECK(w.seen.empty());
}

TEST_CASE("an override set through the API comes first and is validated", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  Warnings w;
  auto lookup = open_lookup(w.options(tuned_copy(**device, dir)), **device, catalog_with());
  const Problem p = gemm(33, 17, 9);
  auto before = lookup->select_ref(p);
  REQUIRE(before.ok());
  CHECK((*before)->rule == SelectionRule::kExact);
  const std::string tuned_config = (*before)->config;
  const std::string other = tuned_config == "BX16_BY8_FLAW0" ? "BX8_BY4_FLAW0" : "BX16_BY8_FLAW0";

  REQUIRE(lookup->set_override("gemm", "gemm_naive_planted", other).ok());
  const Selection over = select_ok(*lookup, p);
  CHECK(over.rule == SelectionRule::kOverride);
  CHECK(over.config == other);
  CHECK_THAT(over.explanation, Catch::StartsWith("override: gemm_naive_planted " + other + " from set_override"));
  CHECK((*before)->rule == SelectionRule::kExact);  // selections handed out earlier stay valid
  CHECK((*before)->config == tuned_config);
  check_launch(*lookup, **device, over);

  SECTION("undeclared values, unknown templates and operators are refused at once") {
    for (auto [tpl, cfg] : {std::pair{"gemm_naive_planted", "BX9_BY4_FLAW0"},
                            std::pair{"gemm_naive_planted", "BX8_BY4_FLAW0);\n#error x"},
                            std::pair{"no_such_template", "BX8"}}) {
      auto set = lookup->set_override("gemm", tpl, cfg);
      REQUIRE_FALSE(set.ok());
      CHECK(set.error().code == ErrorCode::kBadInput);
      CHECK(set.error().message.find('\n') == std::string::npos);
    }
    CHECK_FALSE(lookup->set_override("conv", "gemm_naive_planted", other).ok());
    CHECK(select_ok(*lookup, p).config == other);  // the valid override stays
  }
  SECTION("clearing it restores the chain") {
    lookup->clear_override("gemm");
    const Selection back = select_ok(*lookup, p);
    CHECK(back.rule == SelectionRule::kExact);
    CHECK_THAT(back.explanation, Catch::StartsWith("override: none for gemm"));
  }
}

TEST_CASE("an override from the environment is read at open and validated", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  Warnings w;
  SECTION("well formed") {
    ScopedEnv env("KFORGE_OVERRIDE_GEMM", "gemm_naive_planted:BX16_BY4_FLAW1");
    auto lookup = open_lookup(w.options(db), **device, catalog_with());
    const Selection s = select_ok(*lookup, gemm(33, 17, 9));
    CHECK(s.rule == SelectionRule::kOverride);
    CHECK(s.config == "BX16_BY4_FLAW1");  // an override is obeyed, planted bug and all
    CHECK_THAT(s.explanation, Catch::Contains("from KFORGE_OVERRIDE_GEMM"));
    CHECK(w.seen.empty());
  }
  SECTION("ignored when the options say so") {
    ScopedEnv env("KFORGE_OVERRIDE_GEMM", "gemm_naive_planted:BX16_BY4_FLAW1");
    auto o = w.options(db);
    o.env_overrides = false;
    auto lookup = open_lookup(o, **device, catalog_with());
    CHECK(select_ok(*lookup, gemm(33, 17, 9)).rule == SelectionRule::kExact);
  }
  SECTION("malformed or tampered values warn once and the chain goes on") {
    const std::string value = GENERATE(std::string("gemm_naive_planted"),                  // no config
                                       std::string("gemm_naive_planted:BX8_BY4_FLAW0;x"),  // junk
                                       std::string("gemm_naive_planted:BX8_BY4_FLAW7"),    // undeclared
                                       std::string("nope:BX8_BY4_FLAW0"));                 // unknown
    ScopedEnv env("KFORGE_OVERRIDE_GEMM", value);
    auto lookup = open_lookup(w.options(db), **device, catalog_with());
    const Selection a = select_ok(*lookup, gemm(33, 17, 9));
    const Selection b = select_ok(*lookup, gemm(66, 17, 9));
    CHECK(a.rule == SelectionRule::kExact);
    CHECK(b.rule == SelectionRule::kNearest);
    CHECK_THAT(a.explanation, Catch::StartsWith("override: ignored: KFORGE_OVERRIDE_GEMM"));
    CHECK(w.seen.size() == 1);
    CHECK(w.count("KFORGE_OVERRIDE_GEMM") == 1);
  }
}

TEST_CASE("same_arch, then same_vendor, after this device's own entries", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  Warnings w;
  auto fresh = [&] { return open_lookup(w.options(db), **device, catalog_with()); };

  // Another part of the same architecture holds the only entries.
  plant_device(db, "sibling-key", "Sibling part", "vendor", "arch");
  move_winners(db, "sibling-key");
  {
    auto lookup = fresh();
    const Selection s = select_ok(*lookup, gemm(33, 17, 9));
    CHECK(s.rule == SelectionRule::kSameArch);
    CHECK(s.tuned_device == "Sibling part");
    CHECK(s.distance == 0);
    CHECK_THAT(s.explanation, Catch::Contains("nearest: no usable tuned problem on this device"));
    const Selection far = select_ok(*lookup, gemm(33, 34, 9));
    CHECK(far.rule == SelectionRule::kSameArch);
    CHECK(far.distance == Approx(1.0));
    check_launch(*lookup, **device, far);
  }
  // A part of the same vendor but another architecture, with another config.
  plant_device(db, "cousin-key", "Cousin part", "vendor", "'another-arch'");
  copy_winners(db, "cousin-key", "BX16_BY8_FLAW0", "sibling-key");
  {
    auto lookup = fresh();
    CHECK(select_ok(*lookup, gemm(33, 17, 9)).rule == SelectionRule::kSameArch);  // before same_vendor
  }
  exec_sql(db, "DELETE FROM winners WHERE device_id = (SELECT id FROM devices WHERE key = 'sibling-key')");
  {
    auto lookup = fresh();
    const Selection s = select_ok(*lookup, gemm(33, 17, 9));
    CHECK(s.rule == SelectionRule::kSameVendor);
    CHECK(s.config == "BX16_BY8_FLAW0");
    CHECK(s.tuned_device == "Cousin part");
    CHECK_THAT(s.explanation, Catch::Contains("same_arch: no usable entry"));
    check_launch(*lookup, **device, s);
  }
  // Another vendor's entries are never used.
  exec_sql(db, "UPDATE devices SET vendor = 'Another vendor' WHERE key = 'cousin-key'");
  {
    auto lookup = fresh();
    CHECK(select_ok(*lookup, gemm(33, 17, 9)).rule == SelectionRule::kDefault);
  }
}

TEST_CASE("this device's nearest problem beats another device's exact one", "[lookup][opencl]") {
  TempDir dir;
  auto device = open_device("auto");
  REQUIRE(device.ok());
  const std::string db = tuned_copy(**device, dir);
  // The sibling holds an entry for gemm(66, 17, 9) exactly.
  plant_device(db, "sibling-key", "Sibling part", "vendor", "arch");
  const Problem target = gemm(66, 17, 9);
  exec_sql(db, "INSERT INTO problems (key, op, dims_json, dtype, layout) VALUES ('" + target.key() +
                   "', 'gemm', '{\"K\":9,\"M\":66,\"N\":17,\"batch\":1}', 'f32', 'NN')");
  plant_winners(db, "1", "(SELECT id FROM devices WHERE key = 'sibling-key')",
                "(SELECT id FROM problems WHERE key = '" + target.key() + "')", "w.config");
  Warnings w;
  auto lookup = open_lookup(w.options(db), **device, catalog_with());
  const Selection s = select_ok(*lookup, target);
  CHECK(s.rule == SelectionRule::kNearest);
  CHECK(s.tuned_problem == gemm(33, 17, 9).key());
}
