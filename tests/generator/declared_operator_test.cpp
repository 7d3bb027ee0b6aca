// Operators declared in data: the declaration's checks (each bad field named
// with its file and value), workloads, cost, tolerances and the registry.
#include "generator/declared_operator.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "generator/input_distribution.hpp"
#include "generator/workload_builder.hpp"
#include "tests/test_util.hpp"

using namespace kforge;
using nlohmann::json;

namespace {

const std::string kStencil = std::string(KFORGE_TEST_DATA_DIR) + "/operators/stencil5";

json saxpy_declaration() {
  return json::parse(R"({
    "schema_version": 1, "name": "saxpy_t", "dims": [{"name": "n"}], "default_problem": {"n": 100},
    "arguments": [
      {"name": "n", "type": "i32", "value": "n"},
      {"name": "a", "type": "f32", "value": 2.5},
      {"name": "x", "type": "buffer", "role": "in", "count": "n", "init": {"kind": "uniform", "low": -1, "high": 1}},
      {"name": "y", "type": "buffer", "role": "out", "dtype": "f32", "count": "n", "tolerance": {"abs": 1e-6}}
    ],
    "flops": "2 * n",
    "reference": {"library": "ref.so", "symbol": "saxpy"}})");
}

/// `j` written as DIR/operator.json beside an (empty) ref.so, then parsed.
Result<OperatorDeclaration> parse_in(const test::TempDir& dir, const json& j) {
  std::ofstream(dir.file("ref.so")) << "";
  const std::string path = dir.file("operator.json");
  std::ofstream(path) << j.dump();
  return OperatorDeclaration::parse(j.dump(), path);
}

/// The declaration with `edit` applied fails, naming the file and every `parts`.
void fails_naming(json j, const std::vector<std::string>& parts) {
  test::TempDir dir;
  auto d = parse_in(dir, j);
  REQUIRE_FALSE(d.ok());
  const std::string& m = d.error().message;
  INFO(m);
  CHECK(d.error().code == ErrorCode::kBadInput);
  CHECK(m.find(dir.file("operator.json") + ": ") == 0);
  CHECK(m.find('\n') == std::string::npos);
  for (const auto& p : parts) CHECK(m.find(p) != std::string::npos);
}

/// A reference that computes saxpy in double, for the workload tests.
class SaxpyReference final : public ExternalReference {
 public:
  std::string describe() const override { return "test saxpy"; }
  Status compute(const Problem&, std::vector<ReferenceArgument>& args) const override {
    for (std::size_t i = 0; i < args[3].data.size(); ++i) args[3].data[i] = args[1].value * args[2].data[i];
    return ok_status();
  }
};

/// A reference whose answer changes from call to call.
class DriftingReference final : public ExternalReference {
 public:
  std::string describe() const override { return "drifting"; }
  Status compute(const Problem&, std::vector<ReferenceArgument>& args) const override {
    for (double& v : args[3].data) v = static_cast<double>(++calls_);
    return ok_status();
  }
  mutable int calls_ = 0;
};

Problem problem_of(const Operator& op, std::map<std::string, std::int64_t> dims) {
  Problem p;
  p.op = std::string(op.name());
  p.dims = std::move(dims);
  auto n = op.normalize(p);
  INFO((n.ok() ? "" : n.error().message));
  REQUIRE(n.ok());
  return *n;
}

}  // namespace

TEST_CASE("declared operator: a declaration parses into its contract", "[declared]") {
  test::TempDir dir;
  auto d = parse_in(dir, saxpy_declaration());
  REQUIRE(d.ok());
  CHECK(d->name == "saxpy_t");
  REQUIRE(d->arguments.size() == 4);
  CHECK(d->arguments[2].role == BufferRole::kIn);
  CHECK_FALSE(d->arguments[2].dtype.has_value());  // the problem's dtype
  CHECK(d->arguments[3].poison);                   // an out buffer is poisoned by default
  CHECK(d->reference.library == dir.file("ref.so"));
  CHECK(d->default_problem.at("n") == 100);
}

TEST_CASE("declared operator: bad fields are one line naming file, field and value", "[declared]") {
  json j = saxpy_declaration();
  j["arguments"][2]["role"] = "sideways";
  fails_naming(j, {"arguments[2].role", "'sideways'", "in, out, inout"});

  j = saxpy_declaration();
  j["arguments"][1]["value"] = 1e39;  // inf as an f32
  fails_naming(j, {"arguments[1].value", "1e+39", "f32"});

  j = saxpy_declaration();
  j["default_problem"]["n"] = std::int64_t{1} << 40;
  fails_naming(j, {"default_problem.n", "1099511627776", "32-bit"});

  j = saxpy_declaration();
  j["arguments"][2]["count"] = "m * 2";
  fails_naming(j, {"arguments[2].count", "unknown name 'm'"});

  j = saxpy_declaration();
  j["arguments"][3]["count"] = "n - 200";
  fails_naming(j, {"arguments[3].count", "'n - 200' evaluates to -100", "positive"});

  j = saxpy_declaration();
  j["arguments"][3]["count"] = "n * 4000000000000000000";
  fails_naming(j, {"arguments[3].count", "overflow"});

  j = saxpy_declaration();
  j.erase("reference");
  fails_naming(j, {"reference: missing"});

  j = saxpy_declaration();
  j["reference"]["library"] = "no_such_ref.so";
  fails_naming(j, {"reference.library", "'no_such_ref.so'", "no such file"});

  j = saxpy_declaration();
  j["arguments"][3].erase("tolerance");
  fails_naming(j, {"arguments[3].tolerance", "missing"});

  j = saxpy_declaration();
  j["arguments"][3]["tolerance"] = {{"ulps", 2}};
  fails_naming(j, {"arguments[3].tolerance.ulps", "unknown field"});

  j = saxpy_declaration();
  j["arguments"][3]["dtype"] = "f128";
  fails_naming(j, {"arguments[3].dtype", "'f128'", "i32, i8, u8, problem"});

  j = saxpy_declaration();
  j["arguments"][2]["init"] = {{"kind", "gaussian"}};
  fails_naming(j, {"arguments[2].init.kind", "'gaussian'"});

  j = saxpy_declaration();
  j["name"] = "gemm";
  fails_naming(j, {"name", "'gemm' is a built-in operator"});

  j = saxpy_declaration();
  j["reference"]["template"] = "reference";
  fails_naming(j, {"reference: give exactly one of library, expected or template"});

  j = saxpy_declaration();
  j["reference"] = {{"template", "no_such_dir"}, {"config", "BX8"}};
  fails_naming(j, {"reference.template", "'no_such_dir/manifest.json': no such file"});

  j = saxpy_declaration();
  j["reference"] = {{"expected", {{"y", "y.npy"}}}};
  fails_naming(j, {"arguments[2].init", "drawn from the seed"});
}

TEST_CASE("declared operator: a fixed problem's .npy data must fit the problem", "[declared]") {
  auto d = OperatorDeclaration::load_dir(kStencil);
  REQUIRE(d.ok());
  REQUIRE(d->has_value());
  auto op = DeclaredOperator::create(std::move(**d), nullptr);
  REQUIRE(op.ok());
  Problem p;
  p.op = "stencil5";
  p.dims = {{"H", 12}, {"W", 21}};
  auto n = (*op)->normalize(p);
  REQUIRE_FALSE(n.ok());
  INFO(n.error().message);
  CHECK(n.error().message.find(kStencil + "/x.npy: shape (345,) holds 345 elements") == 0);
  CHECK(n.error().message.find("arguments[2].count '(H + 2) * (W + 2)' is 322") != std::string::npos);
}

TEST_CASE("declared operator: expected outputs and npy inputs make the stencil's workload", "[declared]") {
  auto d = OperatorDeclaration::load_dir(kStencil);
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(std::move(**d), nullptr);
  REQUIRE(op.ok());
  const Problem p = problem_of(**op, {{"H", 13}, {"W", 21}});
  const Workload w = (*op)->make_workload(p, 7, WorkloadKind::kPoisonedOutput);
  REQUIRE(w.tensors.size() == 2);
  CHECK(w.tensors[0].elements() == 15 * 23);
  CHECK(std::isnan(load_element(w.tensors[1], 0)));  // Y poisoned
  CHECK(output_tensors(w) == std::vector<std::size_t>{1});
  auto refs = (*op)->try_references(p, {&w});
  REQUIRE(refs.ok());
  const Reference& r = (*refs)[0];
  REQUIRE(r.value.size() == 13 * 21);
  // Y[0][0] from the stored input, as the kernel computes it.
  const int c = 23 + 1;
  const double x = load_element(w.tensors[0], c), up = load_element(w.tensors[0], c - 23),
               down = load_element(w.tensors[0], c + 23), west = load_element(w.tensors[0], c - 1),
               east = load_element(w.tensors[0], c + 1);
  CHECK(r.value[0] == Approx(0.5 * x - 0.125 * (up + down + west + east)).margin(1e-12));
  CHECK(r.tolerance * r.scale[0] == 1e-6);
  CHECK((*op)->flops(p) == 6.0 * 13 * 21);
  CHECK((*op)->bytes(p) == 4.0 * (15 * 23 + 13 * 21));
}

TEST_CASE("declared operator: a library reference runs twice and must agree with itself", "[declared]") {
  test::TempDir dir;
  auto d = parse_in(dir, saxpy_declaration());
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
  REQUIRE(op.ok());
  const Problem p = problem_of(**op, {{"n", 33}});
  const Workload w = (*op)->make_workload(p, 1, WorkloadKind::kPoisonedOutput);
  REQUIRE(w.args.size() == 4);
  CHECK(w.args[0].i32 == 33);
  CHECK(w.args[1].f32 == 2.5f);
  auto refs = (*op)->try_references(p, {&w});
  REQUIRE(refs.ok());
  CHECK((*refs)[0].value[5] == 2.5 * load_element(w.tensors[0], 5));

  auto drifting = DeclaredOperator::create(*d, std::make_shared<DriftingReference>());
  REQUIRE(drifting.ok());
  auto bad = (*drifting)->try_references(p, {&w});
  REQUIRE_FALSE(bad.ok());
  INFO(bad.error().message);
  CHECK(bad.error().message.find("reference (drifting)") == 0);
  CHECK(bad.error().message.find("output y element 0: disagrees with itself") != std::string::npos);
}

TEST_CASE("declared operator: dims are checked when a problem is normalized", "[declared]") {
  test::TempDir dir;
  auto d = parse_in(dir, saxpy_declaration());
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
  REQUIRE(op.ok());
  Problem p;
  p.op = "saxpy_t";
  p.dims = {{"m", 4}};
  auto unknown = (*op)->normalize(p);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "saxpy_t: unknown dimension 'm' (saxpy_t reads n)");
  p.dims = {{"n", 0}};
  REQUIRE_FALSE((*op)->normalize(p).ok());
}

TEST_CASE("declared operator: tolerances per dtype, and ulps of the reference", "[declared]") {
  DeclaredArgument a;
  a.tolerance[std::nullopt] = ToleranceSpec{1e-3, 0, 0};
  a.tolerance[Dtype::kF32] = ToleranceSpec{0, 0, 2};
  CHECK(a.tolerance_for(Dtype::kF16).abs == 1e-3);
  CHECK(a.tolerance_for(Dtype::kF32).ulp == 2);
}

TEST_CASE("declared operator: distributions stay in their ranges and repeat from a seed", "[declared]") {
  auto filled = [](InputInit init, std::uint64_t seed) {
    HostTensor t = filled_tensor("t", Dtype::kF32, 4000, 0.0f);
    fill_input(t, init, tensor_stream(seed, 0), nullptr);
    return t;
  };
  InputInit u;
  u.a = 2.0;
  u.b = 3.0;
  const HostTensor a = filled(u, 1);
  for (std::size_t i = 0; i < a.elements(); ++i) {
    CHECK(load_element(a, i) >= 2.0f);
    CHECK(load_element(a, i) <= 3.0f);
  }
  CHECK(filled(u, 1).bytes == a.bytes);
  CHECK(filled(u, 2).bytes != a.bytes);
  InputInit ints;
  ints.kind = InputInit::Kind::kIntegers;
  ints.a = -3;
  ints.b = 3;
  const HostTensor b = filled(ints, 1);
  std::set<float> seen;
  for (std::size_t i = 0; i < b.elements(); ++i) seen.insert(load_element(b, i));
  CHECK(seen == std::set<float>{-3, -2, -1, 0, 1, 2, 3});
  InputInit ramp;
  ramp.kind = InputInit::Kind::kRamp;
  ramp.a = 1;
  ramp.b = 0.5;
  CHECK(load_element(filled(ramp, 1), 4) == 3.0f);
  InputInit normal;
  normal.kind = InputInit::Kind::kNormal;
  normal.a = 10;
  normal.b = 1;
  const HostTensor n = filled(normal, 3);
  double sum = 0;
  for (std::size_t i = 0; i < n.elements(); ++i) sum += load_element(n, i);
  CHECK(sum / 4000 == Approx(10).margin(0.1));
}

TEST_CASE("declared operator: the registry holds one declaration per name", "[declared]") {
  test::TempDir dir;
  json j = saxpy_declaration();
  j["name"] = "registry_t";
  auto d = parse_in(dir, j);
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
  REQUIRE(op.ok());
  REQUIRE(register_operator(*op, d->canonical, "a/operator.json").ok());
  CHECK(find_operator("registry_t") == op->get());
  CHECK(register_operator(*op, d->canonical, "b/operator.json").ok());  // the same again
  auto other = register_operator(*op, d->canonical + " ", "c/operator.json");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message ==
        "c/operator.json: name: operator 'registry_t' is already declared differently by "
        "a/operator.json");
}

TEST_CASE("declared operator: a scalar takes its value from a problem attribute", "[declared]") {
  test::TempDir dir;
  json j = saxpy_declaration();
  j["attributes"] = json::parse(R"([{"name": "sign", "values": ["plus", "minus"], "doc": "the sign of a"}])");
  j["arguments"][1] = json::parse(R"({"name": "a", "type": "f32", "value": "1 - 2 * sign"})");
  auto d = parse_in(dir, j);
  INFO((d.ok() ? "" : d.error().message));
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
  REQUIRE(op.ok());
  REQUIRE((*op)->attributes().size() == 1);
  CHECK((*op)->extra_names() == std::vector<std::string>{"dtype_bytes", "sign"});

  Problem p;
  p.op = "saxpy_t";
  p.dims = {{"n", 8}};
  auto plain = (*op)->normalize(p);
  REQUIRE(plain.ok());
  CHECK(plain->attrs.at("sign") == "plus");  // the first value is the default
  CHECK((*op)->make_workload(*plain, 1, WorkloadKind::kPoisonedOutput).args[1].f32 == 1.0f);
  p.attrs = {{"sign", "minus"}};
  auto minus = (*op)->normalize(p);
  REQUIRE(minus.ok());
  CHECK((*op)->make_workload(*minus, 1, WorkloadKind::kPoisonedOutput).args[1].f32 == -1.0f);
  CHECK(minus->key() != plain->key());  // tuned and stored apart

  p.attrs = {{"sign", "zero"}};
  auto bad = (*op)->normalize(p);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "saxpy_t: attribute sign = 'zero' is not one of plus, minus");
}

TEST_CASE("declared operator: bad attributes are named with their field", "[declared]") {
  auto with = [](const char* attributes) {
    json j = saxpy_declaration();
    j["attributes"] = json::parse(attributes);
    return j;
  };
  fails_naming(with(R"({"name": "sign"})"), {"attributes: expected an array"});
  fails_naming(with(R"([{"name": "n", "values": ["a"]}])"),
               {"attributes[0].name: 'n' is not a free identifier"});
  fails_naming(with(R"([{"name": "s", "values": []}])"),
               {"attributes[0].values: expected a non-empty array"});
  fails_naming(with(R"([{"name": "s", "values": ["Up"]}])"),
               {"attributes[0].values: \"Up\" is not a new lower-case"});
  fails_naming(with(R"([{"name": "s", "values": ["a", "a"]}])"), {"attributes[0].values: \"a\""});
  fails_naming(with(R"([{"name": "s", "values": ["a"], "doc": 3}])"), {"attributes[0].doc"});
}

TEST_CASE("declared operator: its validation runs are named without gemm's words", "[declared]") {
  test::TempDir dir;
  auto d = parse_in(dir, saxpy_declaration());
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
  REQUIRE(op.ok());
  CHECK((*op)->run_name(WorkloadKind::kAccumulate) == "first validation run, untimed");
  CHECK((*op)->run_name(WorkloadKind::kPoisonedOutput) == "second validation run, the first timed launch");
  CHECK(find_operator("gemm")->run_name(WorkloadKind::kAccumulate) == "accumulate run");
  CHECK(find_operator("reduce")->run_name(WorkloadKind::kAccumulate) == "first validation run, untimed");
}

TEST_CASE("declared operator: names that shadow the prelude or device limits are refused", "[declared]") {
  auto with_attribute = [](const char* attribute) {
    json j = saxpy_declaration();
    j["attributes"] = json::array({json::parse(attribute)});
    return j;
  };
  // KF_THREAD_X and KF_BLOCK_X are the prelude's thread and block indices.
  fails_naming(with_attribute(R"({"name": "thread_x", "values": ["a", "b"]})"),
               {"attributes[0].name: 'thread_x' is reserved: its macro KF_THREAD_X is the prelude's"});
  fails_naming(with_attribute(R"({"name": "block", "values": ["w", "x"]})"),
               {"attributes[0].name: 'block' is reserved: its value 'x' makes macro KF_BLOCK_X"});
  fails_naming(with_attribute(R"({"name": "kf_mode", "values": ["a"]})"),
               {"attributes[0].name: 'kf_mode' is reserved: the prelude's KF_/kf_ names"});
  fails_naming(with_attribute(R"({"name": "simd_width", "values": ["a"]})"),
               {"attributes[0].name: 'simd_width' is reserved: a device limit"});
  for (const char* name : {"max_block_threads", "local_mem_bytes", "min", "ceil_div", "KF_N"}) {
    json j = saxpy_declaration();
    j["dims"][0]["name"] = name;
    INFO(name);
    fails_naming(j, {"dims[0].name: '" + std::string(name) + "' is reserved"});
  }
}

TEST_CASE("declared operator: element dtypes store exactly, integers saturate, NaN poisons", "[declared]") {
  CHECK(parse_element_dtype("i8") == Dtype::kI8);
  CHECK_FALSE(parse_dtype("i32").has_value());  // not a problem's dtype
  CHECK(dtype_bytes(Dtype::kF64) == 8);
  CHECK(dtype_bytes(Dtype::kU8) == 1);
  HostTensor i32 = filled_tensor("q", Dtype::kI32, 3, 0.0f);
  store_value(i32, 0, 33554433.0);  // 2^25 + 1: not a float, exact here
  store_value(i32, 1, 2.5);         // nearest even
  store_value(i32, 2, std::nan(""));
  CHECK(load_value(i32, 0) == 33554433.0);
  CHECK(load_value(i32, 1) == 2.0);
  CHECK(load_value(i32, 2) == kPoisonI32);
  HostTensor i8 = filled_tensor("q", Dtype::kI8, 2, 0.0f);
  store_value(i8, 0, 300.0);
  store_value(i8, 1, -300.0);
  CHECK(load_value(i8, 0) == 127.0);
  CHECK(load_value(i8, 1) == -128.0);
  HostTensor u8 = filled_tensor("q", Dtype::kU8, 1, std::nanf(""));
  CHECK(load_value(u8, 0) == kPoisonU8);
  HostTensor f64 = filled_tensor("q", Dtype::kF64, 1, 0.0f);
  store_value(f64, 0, 0.1);
  CHECK(load_value(f64, 0) == 0.1);
}

TEST_CASE("declared operator: an integer output is exact, an f16 one has f16 ulps", "[declared]") {
  test::TempDir dir;
  json j = saxpy_declaration();
  j["arguments"][3] = {{"name", "y"},    {"type", "buffer"}, {"role", "out"},
                       {"dtype", "f16"}, {"count", "n"},     {"tolerance", {{"ulp", 1}}}};
  j["arguments"].push_back({{"name", "q"},
                            {"type", "buffer"},
                            {"role", "out"},
                            {"dtype", "i32"},
                            {"count", "n"},
                            {"tolerance", "exact"}});
  j["reference"] = {{"expected", {{"y", "y.npy"}, {"q", "q.npy"}}}};
  j["arguments"][2]["init"] = {{"kind", "constant"}, {"value", 1}};
  j["default_problem"] = {{"n", 2}};
  REQUIRE(write_npy(dir.file("y.npy"), {1.0, 1000.0}).ok());
  REQUIRE(write_npy(dir.file("q.npy"), {1.0, -7.0}, "<f8").ok());
  auto d = parse_in(dir, j);
  REQUIRE(d.ok());
  // Float data for an integer buffer is refused, naming both files' fields.
  auto floats = DeclaredOperator::create(*d, nullptr);
  REQUIRE_FALSE(floats.ok());
  CHECK(floats.error().message.find("q.npy: dtype '<f8' is not an integer type") != std::string::npos);
  CHECK(floats.error().message.find("arguments[4].dtype is i32") != std::string::npos);
  REQUIRE(write_npy(dir.file("q.npy"), {1.0, -7.0}, "<i4").ok());
  auto op = DeclaredOperator::create(*d, nullptr);
  REQUIRE(op.ok());
  Problem p;
  p.dims = {{"n", 2}};
  auto ref = (*op)->reference_from(*(*op)->normalize(p), {1.0, 1000.0, 1.0, -7.0});
  REQUIRE(ref.ok());
  CHECK(ref->scale == std::vector<double>{std::ldexp(1.0, -10), 0.5, 0.0, 0.0});
}

TEST_CASE("declared operator: NaN in an expected .npy is refused at load, naming the file and element",
          "[declared]") {
  // Issue 56: a NaN expected value failed every candidate later, unexplained.
  test::TempDir dir;
  json j = saxpy_declaration();
  j["reference"] = {{"expected", {{"y", "y.npy"}}}};
  j["arguments"][2]["init"] = {{"kind", "constant"}, {"value", 1}};
  j["default_problem"] = {{"n", 3}};
  REQUIRE(write_npy(dir.file("y.npy"), {1.0, std::nan(""), 2.0}).ok());
  auto d = parse_in(dir, j);
  REQUIRE(d.ok());
  auto op = DeclaredOperator::create(*d, nullptr);
  REQUIRE_FALSE(op.ok());
  INFO(op.error().message);
  CHECK(op.error().code == ErrorCode::kBadInput);
  CHECK(op.error().message.find("y.npy: element 1 is NaN") != std::string::npos);
  CHECK(op.error().message.find("reference.expected.y") != std::string::npos);
}

TEST_CASE("declared operator: a negative flops or bytes count is refused naming the field", "[declared]") {
  // Issue 56: "flops": "n - 200" printed negative GFLOP/s.
  for (const char* field : {"flops", "bytes"}) {
    test::TempDir dir;
    json j = saxpy_declaration();
    j[field] = "n - 200";
    auto d = parse_in(dir, j);
    REQUIRE(d.ok());
    auto op = DeclaredOperator::create(*d, std::make_shared<SaxpyReference>());
    REQUIRE(op.ok());
    Problem p;
    p.dims = {{"n", 100}};
    auto n = (*op)->normalize(p);
    REQUIRE_FALSE(n.ok());
    INFO(n.error().message);
    CHECK(n.error().code == ErrorCode::kBadInput);
    CHECK(n.error().message.find(std::string(field) + ": 'n - 200' evaluates to -100") != std::string::npos);
  }
}
