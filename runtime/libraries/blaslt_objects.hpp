// What a cuBLASLt or hipBLASLt gemm is bound with, for either library: `Lib`
// is a vendor's traits (cublaslt_traits.hpp, hipblaslt_traits.hpp), naming
// its API's types, values and entry points. The two libraries share one
// call sequence; only these names and the stored algorithm's form differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/result.hpp"
#include "runtime/libraries/column_major_gemm.hpp"

namespace kforge {

/// `what` returned `st`: "cublasLtMatmul returned CUBLAS_STATUS_NOT_SUPPORTED (15)".
template <class Lib>
Error blaslt_error(const typename Lib::Api& api, const std::string& what, typename Lib::StatusCode st,
                   ErrorCode code) {
  return Error{code, what + " returned " + Lib::status_text(api, st), {}};
}

/// A call made while binding: where it fails the library cannot run the problem.
template <class Lib>
Status blaslt_check(const typename Lib::Api& api, typename Lib::StatusCode st, const std::string& what) {
  if (st == Lib::kSuccess) return ok_status();
  return blaslt_error<Lib>(api, what, st, ErrorCode::kUnsupported);
}

/// The library's column-major view of the problem, its input type and epilogue.
struct BlasLtShape {
  ColumnMajorGemm g;
  std::int32_t op_a = 0, op_b = 0;  ///< the library's operation values
  int in_type = 0;
  std::uint32_t epilogue = 0;  ///< the library's epilogue value, where it binds one
  bool bias = false;           ///< the epilogue reads the bias pointer
};

/// The handle and descriptors of one bound problem, destroyed with it.
template <class Lib>
struct BlasLtObjects {
  const typename Lib::Api& api;
  typename Lib::Handle handle = nullptr;
  typename Lib::MatmulDesc op = nullptr;
  typename Lib::MatrixLayout a = nullptr, b = nullptr, c = nullptr;
  explicit BlasLtObjects(const typename Lib::Api& loaded) : api(loaded) {}
  BlasLtObjects(const BlasLtObjects&) = delete;
  BlasLtObjects& operator=(const BlasLtObjects&) = delete;
  ~BlasLtObjects() {
    for (typename Lib::MatrixLayout l : {a, b, c})
      if (l) api.matrix_layout_destroy(l);
    if (op) api.matmul_desc_destroy(op);
    if (handle) api.destroy(handle);
  }
};

/// An algorithm and the workspace it runs with.
template <class Lib>
struct BlasLtChoice {
  typename Lib::Algo algo{};
  std::size_t workspace = 0;
};

}  // namespace kforge
