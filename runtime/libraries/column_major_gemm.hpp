// kforge's row-major GEMM as the column-major one cuBLASLt and hipBLASLt
// compute: the row-major C (M x N) is the column-major C^T (N x M) =
// op(B)^T op(A)^T, so kforge's B is the library's A and kforge's A its B.
#pragma once

#include <cstdint>

#include "generator/problem.hpp"

namespace kforge {

struct ColumnMajorGemm {
  std::uint64_t m = 0, n = 0, k = 0;      ///< of C^T: kforge's N, M, K
  bool trans_a = false, trans_b = false;  ///< the library's op(A), op(B)
  std::uint64_t a_rows = 0, a_cols = 0;   ///< the library's A as stored (kforge's B)
  std::uint64_t b_rows = 0, b_cols = 0;   ///< the library's B as stored (kforge's A)
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int32_t batch = 1;
  std::int64_t a_stride = 0, b_stride = 0, c_stride = 0;  ///< elements between batches

  static ColumnMajorGemm of(const Problem& p) {
    ColumnMajorGemm g;
    const auto M = static_cast<std::uint64_t>(p.dim("M")), N = static_cast<std::uint64_t>(p.dim("N"));
    const auto K = static_cast<std::uint64_t>(p.dim("K"));
    g.m = N, g.n = M, g.k = K;
    g.batch = static_cast<std::int32_t>(p.dim("batch") > 1 ? p.dim("batch") : 1);
    // kforge's B: K x N row-major is N x K column-major (op N); stored
    // transposed (N x K row-major) it is K x N column-major (op T).
    g.trans_a = p.layout.trans_b;
    g.a_rows = g.trans_a ? K : N, g.a_cols = g.trans_a ? N : K;
    // kforge's A: M x K row-major is K x M column-major (op N), or M x K (op T).
    g.trans_b = p.layout.trans_a;
    g.b_rows = g.trans_b ? M : K, g.b_cols = g.trans_b ? K : M;
    g.lda = static_cast<std::int64_t>(g.a_rows), g.ldb = static_cast<std::int64_t>(g.b_rows);
    g.ldc = static_cast<std::int64_t>(N);
    g.a_stride = static_cast<std::int64_t>(K * N), g.b_stride = static_cast<std::int64_t>(M * K);
    g.c_stride = static_cast<std::int64_t>(M * N);
    return g;
  }
};

}  // namespace kforge
