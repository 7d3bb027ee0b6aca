// The C API (kforge.h, libkforge.so): select and explain through C, a
// tampered database refused with a warning, errors as statuses and messages.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "bindings/c/kforge.h"
#include "tests/test_util.hpp"

namespace {

void sql(const std::string& path, const std::string& text) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

void collect(const char* message, void* user) { static_cast<std::vector<std::string>*>(user)->push_back(message); }

struct Opened {
  kforge_lookup* lookup = nullptr;
  std::vector<std::string> warnings;
  explicit Opened(const std::string& db) {
    kforge_options o;
    kforge_options_init(&o);
    o.user_db = db.c_str();
    static const kforge::test::TempDir binaries;  // never the user's binary cache
    o.binary_cache_dir = binaries.path().c_str();
    o.on_warning = collect;
    o.user_data = &warnings;
    const kforge_status s = kforge_open(&o, &lookup);
    INFO(kforge_last_error());
    REQUIRE(s == KFORGE_OK);
  }
  ~Opened() { kforge_close(lookup); }
  const kforge_selection* select(std::int64_t m) {
    const kforge_dim dims[] = {{"N", 40}, {"M", m}, {"K", 32}};
    const kforge_problem p = {"gemm", dims, 3, nullptr, nullptr};
    const kforge_selection* sel = nullptr;
    const kforge_status s = kforge_select(lookup, &p, &sel);
    INFO(kforge_last_error());
    REQUIRE(s == KFORGE_OK);
    return sel;
  }
};

}  // namespace

TEST_CASE("the C API selects, explains and refuses a tampered database", "[c_api][opencl]") {
  kforge::test::TempDir dir;
  const std::string db = dir.file("k.db");
  const std::string tune = std::string(KFORGE_CLI) + " tune --db " + db +
                           " --shape M=48,N=40,K=32 --max-evals 3 --min-reps 2 --max-reps 2 --quiet > /dev/null";
  REQUIRE(std::system(tune.c_str()) == 0);
  {
    Opened k(db);
    const kforge_selection* exact = k.select(48);
    CHECK(std::string(kforge_selection_rule(exact)) == "exact");
    CHECK(std::string(kforge_selection_explain(exact)).find("exact: ") != std::string::npos);
    CHECK(k.select(48) == exact);  // cached: the same selection
    CHECK(std::string(kforge_selection_rule(k.select(96))) == "nearest");
    CHECK(k.warnings.empty());
  }
  sql(db, "UPDATE winners SET config = 'BM64);\n#error injected'");
  {
    Opened k(db);
    const kforge_selection* sel = k.select(48);
    CHECK(std::string(kforge_selection_rule(sel)) == "default");
    CHECK(std::string(kforge_selection_config(sel)).find("error") == std::string::npos);
    CHECK(std::string(kforge_selection_explain(sel)).find("invalid configuration") != std::string::npos);
    k.select(96);
    REQUIRE(k.warnings.size() == 1);
    CHECK(k.warnings[0].find("ignoring an entry of template") != std::string::npos);
    CHECK(kforge_prepare(k.lookup, sel) == KFORGE_OK);
  }
}

TEST_CASE("C API errors are statuses with one-line messages", "[c_api][opencl]") {
  kforge::test::TempDir dir;
  Opened k(dir.file("none.db"));
  const kforge_dim dims[] = {{"M", 8}, {"N", 8}, {"K", 8}};
  const kforge_selection* sel = nullptr;
  const kforge_problem bad_dtype = {"gemm", dims, 3, "f64", "NN"};
  CHECK(kforge_select(k.lookup, &bad_dtype, &sel) == KFORGE_ERROR_BAD_INPUT);
  CHECK(std::string(kforge_last_error()) == "problem: unknown dtype 'f64'");
  const kforge_problem bad_op = {"conv", dims, 3, "f32", "NN"};
  CHECK(kforge_select(k.lookup, &bad_op, &sel) == KFORGE_ERROR_BAD_INPUT);
  const kforge_dim twice[] = {{"M", 8}, {"M", 9}, {"K", 8}};
  const kforge_problem dup = {"gemm", twice, 3, "f32", "NN"};
  CHECK(kforge_select(k.lookup, &dup, &sel) == KFORGE_ERROR_BAD_INPUT);
  CHECK(kforge_set_override(k.lookup, "gemm", "gemm_simt_tiled", "BM7") == KFORGE_ERROR_BAD_INPUT);
  const std::string msg = kforge_last_error();
  CHECK(msg.find("BM") != std::string::npos);
  CHECK(msg.find('\n') == std::string::npos);
  const kforge_problem ok = {"gemm", dims, 3, "f32", "NN"};
  CHECK(kforge_select(k.lookup, &ok, &sel) == KFORGE_OK);
  CHECK(std::string(kforge_last_error()).empty());
  CHECK(std::string(kforge_status_string(KFORGE_ERROR_DATABASE)) == "database error");
  kforge_lookup* none = nullptr;
  kforge_options o;
  kforge_options_init(&o);
  o.device = "opencl:99";
  CHECK(kforge_open(&o, &none) != KFORGE_OK);
  CHECK(none == nullptr);
  CHECK(std::string(kforge_last_error()).find("99") != std::string::npos);
}

namespace {

/// gemm's nine arguments for M = N = 128, K = 64 on buffers of the given sizes.
struct GemmArgs {
  kforge_lookup* lookup;
  std::vector<kforge_buffer*> buffers;
  std::vector<kforge_arg> args;
  GemmArgs(kforge_lookup* l, std::size_t c_bytes) : lookup(l) {
    for (std::size_t bytes :
         {std::size_t{128 * 64 * 4}, std::size_t{64 * 128 * 4}, c_bytes, std::size_t{128 * 4}}) {
      kforge_buffer* b = nullptr;
      REQUIRE(kforge_buffer_create(lookup, bytes, &b) == KFORGE_OK);
      buffers.push_back(b);
    }
    args = {{KFORGE_ARG_INT32, nullptr, 128, 0},    {KFORGE_ARG_INT32, nullptr, 128, 0},
            {KFORGE_ARG_INT32, nullptr, 64, 0},     {KFORGE_ARG_FLOAT32, nullptr, 0, 1.0f},
            {KFORGE_ARG_BUFFER, buffers[0], 0, 0},  {KFORGE_ARG_BUFFER, buffers[1], 0, 0},
            {KFORGE_ARG_FLOAT32, nullptr, 0, 0.0f}, {KFORGE_ARG_BUFFER, buffers[2], 0, 0},
            {KFORGE_ARG_BUFFER, buffers[3], 0, 0}};
  }
  ~GemmArgs() {
    for (kforge_buffer* b : buffers) kforge_buffer_destroy(b);
  }
};

}  // namespace

TEST_CASE("C API launches are checked against the operator's arguments", "[c_api][opencl][launch]") {
  kforge::test::TempDir dir;
  Opened k(dir.file("none.db"));
  const kforge_dim dims[] = {{"M", 128}, {"N", 128}, {"K", 64}};
  const kforge_problem p = {"gemm", dims, 3, "f32", "NN"};
  const kforge_selection* sel = nullptr;
  REQUIRE(kforge_select(k.lookup, &p, &sel) == KFORGE_OK);

  SECTION("a 1 KiB output where 64 KiB are needed") {
    GemmArgs g(k.lookup, 1024);
    CHECK(kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), nullptr) == KFORGE_ERROR_BAD_INPUT);
    CHECK(
        std::string(kforge_last_error()) ==
        "gemm launch: argument 7 (C) needs 16384 elements of f32, 65536 bytes; the buffer holds 1024 bytes");
  }
  SECTION("eight arguments for nine") {
    GemmArgs g(k.lookup, 128 * 128 * 4);
    CHECK(kforge_launch(k.lookup, sel, g.args.data(), 8, nullptr) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) ==
          "gemm launch: 8 arguments given, gemm takes 9 (M, N, K, alpha, A, B, beta, C, bias)");
  }
  SECTION("a scalar of the wrong kind, a dim other than the problem's") {
    GemmArgs g(k.lookup, 128 * 128 * 4);
    g.args[3] = {KFORGE_ARG_INT32, nullptr, 1, 0};
    CHECK(kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), nullptr) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) ==
          "gemm launch: argument 3 (alpha) must be a float32, got an int32");
    g.args[3] = {KFORGE_ARG_FLOAT32, nullptr, 0, 1.0f};
    g.args[0].i32 = 4096;  // the buffers hold 128 rows
    CHECK(kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), nullptr) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) ==
          "gemm launch: argument 0 (M) is 4096, the selected problem has M = 128");
    g.args[4] = {KFORGE_ARG_INT32, nullptr, 0, 0};
    g.args[0].i32 = 128;
    CHECK(kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), nullptr) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) == "gemm launch: argument 4 (A) must be a buffer, got an int32");
  }
  SECTION("right sizes launch; the bias a plain gemm never reads may be any size") {
    GemmArgs g(k.lookup, 128 * 128 * 4);
    kforge_buffer* tiny = nullptr;
    REQUIRE(kforge_buffer_create(k.lookup, 4, &tiny) == KFORGE_OK);
    g.args[8].buffer = tiny;
    double ms = -1;
    const kforge_status s = kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), &ms);
    INFO(kforge_last_error());
    CHECK(s == KFORGE_OK);
    CHECK(ms >= 0);
    kforge_buffer_destroy(tiny);
  }
}

TEST_CASE("a C launch without device_ms is enqueued, and a read or synchronize waits for it",
          "[c_api][opencl][launch]") {
  kforge::test::TempDir dir;
  Opened k(dir.file("none.db"));
  const kforge_dim dims[] = {{"M", 128}, {"N", 128}, {"K", 64}};
  const kforge_problem p = {"gemm", dims, 3, "f32", "NN"};
  const kforge_selection* sel = nullptr;
  REQUIRE(kforge_select(k.lookup, &p, &sel) == KFORGE_OK);
  GemmArgs g(k.lookup, 128 * 128 * 4);
  // A = 1 everywhere, B = 2 everywhere: every element of C is 64 * 2.
  const std::vector<float> ones(128 * 64, 1.0f), twos(64 * 128, 2.0f);
  REQUIRE(kforge_buffer_write(k.lookup, g.buffers[0], ones.data(), ones.size() * 4) == KFORGE_OK);
  REQUIRE(kforge_buffer_write(k.lookup, g.buffers[1], twos.data(), twos.size() * 4) == KFORGE_OK);
  for (int i = 0; i < 8; ++i) {
    g.args[3].f32 = static_cast<float>(i + 1);  // alpha: the last one enqueued wins
    REQUIRE(kforge_launch(k.lookup, sel, g.args.data(), g.args.size(), nullptr) == KFORGE_OK);
  }
  std::vector<float> c(128 * 128, -1.0f);
  REQUIRE(kforge_buffer_read(k.lookup, g.buffers[2], c.data(), c.size() * 4) == KFORGE_OK);
  CHECK(c.front() == 8 * 128.0f);
  CHECK(c.back() == 8 * 128.0f);
  CHECK(kforge_synchronize(k.lookup) == KFORGE_OK);
  CHECK(kforge_synchronize(nullptr) == KFORGE_ERROR_BAD_INPUT);

  // OpenCL launches go to the device's own in-order queue: no caller streams.
  CHECK(kforge_use_stream(k.lookup, 0) == KFORGE_ERROR_BAD_INPUT);
  CHECK(std::string(kforge_last_error()) ==
        "kforge_use_stream: the opencl backend launches on its own queue; streams are for CUDA and HIP");
  CHECK(kforge_api_version() == 6);
}

TEST_CASE("C callers select fused and attributed problems through kforge_problem_ext",
          "[c_api][opencl][ext]") {
  kforge::test::TempDir dir;
  Opened k(dir.file("none.db"));
  const kforge_dim dims[] = {{"M", 128}, {"N", 128}, {"K", 64}};
  kforge_problem_ext fused;
  kforge_problem_ext_init(&fused);
  CHECK(fused.struct_size == sizeof fused);
  fused.problem = {"gemm", dims, 3, "f32", "NN"};
  fused.epilogue = "bias+relu";
  const kforge_selection* plain_sel = nullptr;
  const kforge_selection* fused_sel = nullptr;
  REQUIRE(kforge_select(k.lookup, &fused.problem, &plain_sel) == KFORGE_OK);
  REQUIRE(kforge_select_ext(k.lookup, &fused, &fused_sel) == KFORGE_OK);
  CHECK(fused_sel != plain_sel);
  const kforge_selection* again = nullptr;
  REQUIRE(kforge_select_ext(k.lookup, &fused, &again) == KFORGE_OK);
  CHECK(again == fused_sel);  // cached like any problem

  // The epilogue reached the problem: its bias is read, so its size counts.
  GemmArgs g(k.lookup, 128 * 128 * 4);
  kforge_buffer* tiny = nullptr;
  REQUIRE(kforge_buffer_create(k.lookup, 4, &tiny) == KFORGE_OK);
  g.args[8].buffer = tiny;
  CHECK(kforge_launch(k.lookup, plain_sel, g.args.data(), g.args.size(), nullptr) == KFORGE_OK);
  CHECK(kforge_launch(k.lookup, fused_sel, g.args.data(), g.args.size(), nullptr) == KFORGE_ERROR_BAD_INPUT);
  CHECK_THAT(std::string(kforge_last_error()),
             Catch::StartsWith("gemm launch: argument 8 (bias) needs 128 elements of f32"));
  kforge_buffer_destroy(tiny);

  const kforge_dim rc[] = {{"rows", 4}, {"cols", 33}};
  const kforge_attr max[] = {{"kind", "max"}};
  kforge_problem_ext reduce;
  kforge_problem_ext_init(&reduce);
  reduce.problem = {"reduce", rc, 2, "f32", nullptr};
  const kforge_selection* sum_sel = nullptr;
  const kforge_selection* max_sel = nullptr;
  REQUIRE(kforge_select_ext(k.lookup, &reduce, &sum_sel) == KFORGE_OK);
  reduce.attrs = max;
  reduce.num_attrs = 1;
  REQUIRE(kforge_select_ext(k.lookup, &reduce, &max_sel) == KFORGE_OK);
  CHECK(max_sel != sum_sel);

  SECTION("bad extensions are refused with a message") {
    const kforge_selection* none = nullptr;
    const kforge_attr min[] = {{"kind", "min"}};
    reduce.attrs = min;
    CHECK(kforge_select_ext(k.lookup, &reduce, &none) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) == "reduce: attribute kind = 'min' is not one of sum, max");
    const kforge_attr twice[] = {{"kind", "max"}, {"kind", "sum"}};
    reduce.attrs = twice;
    reduce.num_attrs = 2;
    CHECK(kforge_select_ext(k.lookup, &reduce, &none) == KFORGE_ERROR_BAD_INPUT);
    CHECK(std::string(kforge_last_error()) == "problem: attribute kind is given twice");
    reduce.num_attrs = 0;
    reduce.epilogue = "relu";
    CHECK(kforge_select_ext(k.lookup, &reduce, &none) == KFORGE_ERROR_BAD_INPUT);
    CHECK_THAT(std::string(kforge_last_error()), Catch::Contains("epilogue 'relu' is not supported"));
    fused.epilogue = "bias+tanh";
    CHECK(kforge_select_ext(k.lookup, &fused, &none) == KFORGE_ERROR_BAD_INPUT);
    CHECK_THAT(std::string(kforge_last_error()), Catch::Contains("tanh"));
    fused.struct_size = 8;
    CHECK(kforge_select_ext(k.lookup, &fused, &none) == KFORGE_ERROR_BAD_INPUT);
    CHECK_THAT(std::string(kforge_last_error()), Catch::Contains("struct_size is 8"));
  }
}

TEST_CASE("the C API switches online tuning on and a blocking select answers exact", "[c_api][online][opencl]") {
  kforge::test::TempDir dir;
  kforge::test::ScopedEnv tuner("KFORGE_TUNER", KFORGE_CLI);
  kforge::test::ScopedEnv cache("KFORGE_CACHE_DIR", dir.file("binaries"));
  Opened o(dir.file("user.db"));
  CHECK(kforge_set_online_tuning(o.lookup, "sometimes", 2, 60) == KFORGE_ERROR_BAD_INPUT);
  CHECK(std::string(kforge_last_error()).find("mode 'sometimes'") != std::string::npos);
  CHECK(kforge_select(o.lookup, nullptr, nullptr) == KFORGE_ERROR_BAD_INPUT);  // still usable after
  REQUIRE(kforge_set_online_tuning(o.lookup, "blocking", 2, 120) == KFORGE_OK);
  const kforge_selection* sel = o.select(48);
  INFO(kforge_selection_explain(sel));
  CHECK(std::string(kforge_selection_rule(sel)) == "exact");
  CHECK(std::string(kforge_selection_explain(sel)).find("tuned online (blocking)") != std::string::npos);
  CHECK(kforge_wait_online_tuning(o.lookup, 10) == KFORGE_OK);
  REQUIRE(kforge_set_online_tuning(o.lookup, "off", 0, 0) == KFORGE_OK);
}
