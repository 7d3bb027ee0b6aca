// The C API (kforge.h, libkforge.so): select and explain through C, a
// tampered database refused with a warning, errors as statuses and messages.
#include <catch2/catch.hpp>
#include <sqlite3.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kforge.h"
#include "test_util.hpp"

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
