/* gemm_simt_tiled: C = act(alpha * op(A) * op(B) + beta * C + bias), batched, row-major
 * (contract: generator/gemm_operator.hpp). Portable: written against the
 * kforge prelude (templates/prelude/, docs/prelude.md), so it runs as OpenCL
 * C, CUDA and HIP.
 *
 * A work-group computes a BM x BN tile of C with (BN/TN) x (BM/TM) threads;
 * each thread a TM x TN register tile, rows ty + i*(BM/TM) and columns
 * tx + j*(BN/TN) (strided, so neighbouring threads touch neighbouring local
 * and global addresses). A and B are staged through local memory BK deep,
 * stored k-major as floats. Global loads are cooperative, VW consecutive
 * elements along each operand's contiguous dimension, bounds-checked: tails
 * are zero-filled, so any M, N, K works. Batch is grid z. beta == 0 never
 * reads C; bias (N floats, broadcast over rows and batches) is read only when
 * KF_BIAS; the prelude's kf_activation applies KF_ACTIVATION. */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef BM
#define BM 32 /* rows of C per work-group */
#endif
#ifndef BN
#define BN 32 /* columns of C per work-group */
#endif
#ifndef BK
#define BK 8 /* depth of the A and B tiles staged per step */
#endif
#ifndef TM
#define TM 2 /* rows of C per thread */
#endif
#ifndef TN
#define TN 2 /* columns of C per thread */
#endif
#ifndef VW
#define VW 1 /* elements per global load along the contiguous dimension: 1, 2, 4 */
#endif
#ifndef PAD
#define PAD 0 /* extra floats per local-memory row against bank conflicts */
#endif

/* ---- problem type (the generator defines them) ---- */
#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME gemm_simt_tiled
#endif
#ifndef KF_TRANS_A
#define KF_TRANS_A 0 /* 1: A is stored K x M */
#endif
#ifndef KF_TRANS_B
#define KF_TRANS_B 0 /* 1: B is stored N x K */
#endif

/* ---- derived ---- */
#define TX (BN / TN)       /* threads along n */
#define TY (BM / TM)       /* threads along m */
#define THREADS (TX * TY)
#define AS_LD (BM + PAD)   /* As[k][m] */
#define BS_LD (BN + PAD)   /* Bs[k][n] */
#define LOADS_A ((BM * BK) / (THREADS * VW)) /* vector loads per thread per step */
#define LOADS_B ((BN * BK) / (THREADS * VW))

#if (BM % TM) || (BN % TN) || ((BM * BK) % (THREADS * VW)) || ((BN * BK) % (THREADS * VW)) || \
    (BM % VW) || (BN % VW) || (BK % VW)
#error "gemm_simt_tiled: invalid configuration (see the manifest's constraints)"
#endif

/* Loads the chunk src[r][c .. c+VW) of a row-major rows_max x cols_max matrix
 * (leading dimension ld) as floats, zero outside the matrix, into a local
 * array of row length dst_ld: at row dst_r, columns dst_c.. or, when
 * `transpose`, at column dst_r, rows dst_c.. */
KF_INLINE void kf_load_chunk(KF_GLOBAL const kf_in_t* src, int ld, int r, int c, int rows_max,
                             int cols_max, KF_LOCAL_PTR float* dst, int dst_r, int dst_c,
                             int dst_ld, int transpose) {
  float v[VW];
  if (r < rows_max && c + VW <= cols_max) {
    KF_LOAD_IN_VEC(v, src, (size_t)r * (size_t)ld + (size_t)c, VW);
  } else {
    KF_UNROLL
    for (int e = 0; e < VW; ++e) {
      v[e] = (r < rows_max && c + e < cols_max)
                 ? KF_LOAD_IN(src, (size_t)r * (size_t)ld + (size_t)(c + e))
                 : 0.0f;
    }
  }
  KF_UNROLL
  for (int e = 0; e < VW; ++e) {
    if (transpose) {
      dst[(dst_c + e) * dst_ld + dst_r] = v[e];
    } else {
      dst[dst_r * dst_ld + dst_c + e] = v[e];
    }
  }
}

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, TY, 1)
KF_KERNEL_NAME(int M, int N, int K, float alpha, KF_GLOBAL const kf_in_t* KF_RESTRICT A,
               KF_GLOBAL const kf_in_t* KF_RESTRICT B, float beta,
               KF_GLOBAL float* KF_RESTRICT C, KF_GLOBAL const float* KF_RESTRICT bias) {
  KF_LOCAL float As[BK * AS_LD];
  KF_LOCAL float Bs[BK * BS_LD];

  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int tid = ty * TX + tx;
  const int m0 = KF_BLOCK_Y * BM;
  const int n0 = KF_BLOCK_X * BN;
  const size_t batch = (size_t)KF_BLOCK_Z;
  A += batch * (size_t)M * (size_t)K;
  B += batch * (size_t)K * (size_t)N;
  C += batch * (size_t)M * (size_t)N;

  float acc[TM][TN];
  KF_UNROLL
  for (int i = 0; i < TM; ++i) {
    KF_UNROLL
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }

  for (int k0 = 0; k0 < K; k0 += BK) {
    /* A tile: op(A)[m0 .. m0+BM, k0 .. k0+BK] into As[k][m]. */
    KF_UNROLL
    for (int l = 0; l < LOADS_A; ++l) {
      const int chunk = tid + l * THREADS;
#if KF_TRANS_A
      /* stored K x M: rows k, contiguous m */
      const int r = chunk / (BM / VW);
      const int c = (chunk % (BM / VW)) * VW;
      kf_load_chunk(A, M, k0 + r, m0 + c, K, M, As, r, c, AS_LD, 0);
#else
      /* stored M x K: rows m, contiguous k */
      const int r = chunk / (BK / VW);
      const int c = (chunk % (BK / VW)) * VW;
      kf_load_chunk(A, K, m0 + r, k0 + c, M, K, As, r, c, AS_LD, 1);
#endif
    }
    /* B tile: op(B)[k0 .. k0+BK, n0 .. n0+BN] into Bs[k][n]. */
    KF_UNROLL
    for (int l = 0; l < LOADS_B; ++l) {
      const int chunk = tid + l * THREADS;
#if KF_TRANS_B
      /* stored N x K: rows n, contiguous k */
      const int r = chunk / (BK / VW);
      const int c = (chunk % (BK / VW)) * VW;
      kf_load_chunk(B, K, n0 + r, k0 + c, N, K, Bs, r, c, BS_LD, 1);
#else
      /* stored K x N: rows k, contiguous n */
      const int r = chunk / (BN / VW);
      const int c = (chunk % (BN / VW)) * VW;
      kf_load_chunk(B, N, k0 + r, n0 + c, K, N, Bs, r, c, BS_LD, 0);
#endif
    }
    KF_BARRIER();

    for (int k = 0; k < BK; ++k) {
      float a[TM];
      float b[TN];
      KF_UNROLL
      for (int i = 0; i < TM; ++i) a[i] = As[k * AS_LD + ty + i * TY];
      KF_UNROLL
      for (int j = 0; j < TN; ++j) b[j] = Bs[k * BS_LD + tx + j * TX];
      KF_UNROLL
      for (int i = 0; i < TM; ++i) {
        KF_UNROLL
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
      }
    }
    KF_BARRIER();
  }

  /* Epilogue: guarded stores; beta == 0 never reads C (it may hold NaN), and
   * without KF_BIAS the bias is never read. */
  KF_UNROLL
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + ty + i * TY;
    if (m >= M) continue;
    KF_UNROLL
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tx + j * TX;
      if (n >= N) continue;
      const size_t idx = (size_t)m * (size_t)N + (size_t)n;
      float out = alpha * acc[i][j];
      if (beta != 0.0f) out += beta * C[idx];
#if KF_BIAS
      out += bias[n];
#endif
      C[idx] = kf_activation(out);
    }
  }
}
