// cuBLASLt and hipBLASLt without a GPU: their symbol tables, cuBLASLt's
// identity where the toolkit's library is installed (loading it needs no
// driver), the reasons they are unavailable where they cannot load, and the
// column-major view of kforge's row-major gemm both are called with.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "runtime/catalog/template_catalog.hpp"
#include "runtime/libraries/column_major_gemm.hpp"
#include "runtime/libraries/cublaslt_api.hpp"
#include "runtime/libraries/hipblaslt_api.hpp"
#include "runtime/libraries/library_candidates.hpp"
#include "tests/test_util.hpp"

using namespace kforge;

namespace {

/// The toolkit's libcublasLt, where this machine has one.
std::string toolkit_cublaslt() {
  for (const char* f : {"/usr/local/cuda/lib64/libcublasLt.so.13", "/usr/local/cuda/lib64/libcublasLt.so.12"})
    if (std::filesystem::exists(f)) return f;
  return "";
}

}  // namespace

TEST_CASE("cublaslt's symbol table names each entry point once", "[cublaslt][unit]") {
  std::set<std::string> names;
  for (const char* n : cublaslt::symbol_names()) {
    CHECK(std::string(n).rfind("cublasLt", 0) == 0);
    names.insert(n);
  }
  CHECK(names.size() == cublaslt::symbol_names().size());
  CHECK(names.count("cublasLtMatmul") == 1);
  CHECK(names.count("cublasLtMatmulAlgoGetHeuristic") == 1);
  CHECK(names.count("cublasLtMatmulAlgoCheck") == 1);
}

TEST_CASE("cublaslt's algorithm identity stores the configuration fields", "[cublaslt][unit]") {
  std::set<std::string> fields;
  for (const auto& f : cublaslt::algo_fields()) fields.insert(f.name);
  for (const char* f : {"id", "tile", "stages", "splitk", "reduction", "swizzle", "custom"})
    CHECK(fields.count(f) == 1);
  CHECK(std::string(cublaslt::algo_fields()[0].name) == "id");
  CHECK(cublaslt::version_text(130100) == "13.1.0");
  CHECK(cublaslt::version_text(120908) == "12.9.8");
}

TEST_CASE("a library without cuBLASLt's symbols is named with the symbol", "[cublaslt][unit]") {
  auto loaded = cublaslt::load_from({"libm.so.6"});
  REQUIRE_FALSE(loaded.ok());
  CHECK_THAT(loaded.error().message, Catch::Contains("symbol cublasLtCreate not found in libm.so.6"));
}

TEST_CASE("the toolkit's libcublasLt loads without a driver and names its version", "[cublaslt][unit]") {
  const std::string file = toolkit_cublaslt();
  if (file.empty()) {
    test::ScopedEnv none("KFORGE_CUBLASLT_LIBRARY", "libcublasLt-absent.so");
    CHECK_THAT(library_availability("cublaslt").unavailable, Catch::Contains("libcublasLt-absent.so"));
    WARN("no CUDA toolkit libcublasLt here: checked its unavailable reason instead");
    return;
  }
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  for (const char* n : cublaslt::symbol_names()) {
    INFO(n);
    CHECK(dlsym(handle, n) != nullptr);
  }
  test::ScopedEnv real("KFORGE_CUBLASLT_LIBRARY", file);
  const LibraryAvailability a = library_availability("cublaslt");
  CHECK(a.unavailable.empty());
  CHECK_THAT(a.identity, Catch::StartsWith("cublaslt 1") && Catch::Contains("libcublasLt.so") &&
                             Catch::Contains(" bytes)"));
}

TEST_CASE("cuBLASLt named by a missing file is unavailable with the path", "[cublaslt][unit]") {
  test::ScopedEnv missing("KFORGE_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so.13");
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* lt = catalog->find("gemm_cublaslt");
  REQUIRE(lt);
  CHECK(lt->manifest.library == "cublaslt");
  CHECK(lt->manifest.supports_target("cuda"));
  CHECK_FALSE(lt->manifest.supports_target("opencl"));
  CHECK(lt->library_identity.empty());
  CHECK_THAT(lt->library_unavailable, Catch::Contains("gemm_cublaslt: unavailable") &&
                                          Catch::Contains("/nonexistent/libcublasLt.so.13"));
  // Never an OpenCL candidate: a tune on PoCL does not see it.
  for (const TemplateSource* t : catalog->for_op("gemm", "opencl"))
    CHECK(t->manifest.name != "gemm_cublaslt");
}

namespace {

/// Column-major C = op(A) op(B) as a BLAS computes it, from `g`'s view.
std::vector<double> column_major_product(const ColumnMajorGemm& g, const std::vector<double>& a,
                                         const std::vector<double>& b, std::int32_t batch) {
  std::vector<double> c(static_cast<std::size_t>(g.c_stride) * batch, 0.0);
  auto at = [](const std::vector<double>& x, std::int64_t off, std::int64_t ld, bool trans, std::uint64_t r,
               std::uint64_t col) {
    // op(X)[r][col]: X stored column-major with leading dimension ld.
    return trans ? x[off + static_cast<std::int64_t>(col) + static_cast<std::int64_t>(r) * ld]
                 : x[off + static_cast<std::int64_t>(r) + static_cast<std::int64_t>(col) * ld];
  };
  for (std::int32_t q = 0; q < batch; ++q)
    for (std::uint64_t i = 0; i < g.m; ++i)
      for (std::uint64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        for (std::uint64_t l = 0; l < g.k; ++l)
          sum +=
              at(a, q * g.a_stride, g.lda, g.trans_a, i, l) * at(b, q * g.b_stride, g.ldb, g.trans_b, l, j);
        c[q * g.c_stride + static_cast<std::int64_t>(i + j * g.m)] = sum;
      }
  return c;
}

}  // namespace

TEST_CASE("the column-major view computes kforge's row-major gemm in every layout", "[cublaslt][unit]") {
  const std::int64_t M = 5, N = 3, K = 4;
  const std::int32_t batch = 2;
  for (const char* layout : {"NN", "NT", "TN", "TT"}) {
    INFO(layout);
    Problem p;
    p.op = "gemm";
    p.dims = {{"M", M}, {"N", N}, {"K", K}, {"batch", batch}};
    p.layout = *parse_layout(layout);
    // kforge's storage (gemm_operator.hpp): A is M x K (K x M transposed), B is K x N (N x K).
    std::vector<double> a(M * K * batch), b(K * N * batch);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 7) - 3;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2;
    const ColumnMajorGemm g = ColumnMajorGemm::of(p);
    // The library's A is kforge's B and its B kforge's A.
    const std::vector<double> c = column_major_product(g, b, a, batch);
    for (std::int32_t q = 0; q < batch; ++q)
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
          double want = 0;
          for (std::int64_t l = 0; l < K; ++l) {
            const double av = p.layout.trans_a ? a[q * M * K + l * M + i] : a[q * M * K + i * K + l];
            const double bv = p.layout.trans_b ? b[q * K * N + j * K + l] : b[q * K * N + l * N + j];
            want += av * bv;
          }
          CHECK(c[q * M * N + i * N + j] == want);  // row-major C[i][j] is C^T's (j, i)
        }
  }
}

TEST_CASE("hipBLASLt builds without its library and is unavailable with the reason", "[hipblaslt][unit]") {
  std::set<std::string> names;
  for (const char* n : hipblaslt::symbol_names()) {
    CHECK(std::string(n).rfind("hipblasLt", 0) == 0);
    names.insert(n);
  }
  CHECK(names.size() == hipblaslt::symbol_names().size());
  CHECK(names.count("hipblasLtMatmul") == 1);
  auto wrong = hipblaslt::load_from({"libm.so.6"});
  REQUIRE_FALSE(wrong.ok());
  CHECK_THAT(wrong.error().message, Catch::Contains("symbol hipblasLtCreate not found in libm.so.6"));
  test::ScopedEnv missing("KFORGE_HIPBLASLT_LIBRARY", "/nonexistent/libhipblaslt.so.0");
  auto catalog = TemplateCatalog::builtin();
  REQUIRE(catalog.ok());
  const TemplateSource* hl = catalog->find("gemm_hipblaslt");
  REQUIRE(hl);
  CHECK(hl->manifest.supports_target("hip"));
  CHECK_THAT(hl->library_unavailable, Catch::Contains("gemm_hipblaslt: unavailable") &&
                                          Catch::Contains("/nonexistent/libhipblaslt.so.0"));
  for (const TemplateSource* t : catalog->for_op("gemm", "opencl"))
    CHECK(t->manifest.name != "gemm_hipblaslt");
}
