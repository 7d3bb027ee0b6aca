/* gemm_mma_sync: C = act(alpha * op(A) * op(B) + beta * C + bias), batched,
 * row-major (contract: generator/gemm_operator.hpp), on NVIDIA tensor cores.
 * CUDA C++ for sm_80 and newer (the manifest's arch_guard): f16 or bf16
 * inputs, f32 accumulation, mma.sync.m16n8k16.
 *
 * A block of WM x WN warps computes a BM x BN tile of C; each warp a
 * (BM/WM) x (BN/WN) tile as 16 x 8 mma tiles. A and B are staged BK deep
 * through STAGES shared-memory buffers filled with cp.async (16-byte chunks,
 * zero-filled outside the matrix), so loads of later tiles overlap the math
 * of the current one. Tiles keep the operands' global orientation (any of
 * the four layouts), and fragments are gathered from shared memory element
 * by element. Tails: any M, N, K whose leading dimensions are multiples of 8
 * (the manifest's envelope; 16-byte chunks must be aligned and lie wholly
 * inside or outside a row). Shared memory is dynamic (KF_DYNAMIC_SHARED_BYTES),
 * so configurations above 48 KB launch too. beta == 0 never reads C. */

/* ---- tunable parameters ---- */
#ifndef BM
#define BM 64 /* rows of C per block */
#endif
#ifndef BN
#define BN 64 /* columns of C per block */
#endif
#ifndef BK
#define BK 32 /* depth of each staged tile */
#endif
#ifndef WM
#define WM 2 /* warps along M */
#endif
#ifndef WN
#define WN 2 /* warps along N */
#endif
#ifndef STAGES
#define STAGES 2 /* shared-memory buffers in the cp.async pipeline */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME gemm_mma_sync
#endif
#ifndef KF_TRANS_A
#define KF_TRANS_A 0
#endif
#ifndef KF_TRANS_B
#define KF_TRANS_B 0
#endif
#if !defined(KF_DTYPE_F16) && !defined(KF_DTYPE_BF16)
#define KF_DTYPE_F16 1
#endif

/* ---- derived ---- */
#define THREADS (WM * WN * 32)
#define WTM (BM / WM) /* warp tile */
#define WTN (BN / WN)
#define MT (WTM / 16) /* mma tiles per warp */
#define NT (WTN / 8)
#define PADE 8 /* elements of padding per shared row (keeps rows 16-byte aligned) */
/* Shared tile shapes follow the global orientation. */
#if KF_TRANS_A
#define A_ROWS BK
#define A_COLS BM
#else
#define A_ROWS BM
#define A_COLS BK
#endif
#if KF_TRANS_B
#define B_ROWS BN
#define B_COLS BK
#else
#define B_ROWS BK
#define B_COLS BN
#endif
#define A_LD (A_COLS + PADE)
#define B_LD (B_COLS + PADE)
#define STAGE_ELEMS (A_ROWS * A_LD + B_ROWS * B_LD)
#define SMEM_BYTES (STAGES * STAGE_ELEMS * 2)

#if (BM % (16 * WM)) || (BN % (8 * WN)) || (BK % 16) || (STAGES < 2)
#error "gemm_mma_sync: invalid configuration (see the manifest's constraints)"
#endif

KF_DYNAMIC_SHARED_BYTES(SMEM_BYTES)

typedef unsigned short kf_u16;

__device__ __forceinline__ void kf_cp_async16(void* smem, const void* gmem, bool valid) {
  const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
  const int src_bytes = valid ? 16 : 0; /* 0: zero-fill, nothing read */
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void kf_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void kf_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Copies the A and B tiles at depth k0 into one stage; rows and chunks
 * outside the matrices are zero-filled. */
__device__ __forceinline__ void kf_load_stage(kf_u16* As, kf_u16* Bs, const kf_u16* A, const kf_u16* B, int M,
                                              int N, int K, int m0, int n0, int k0, int tid) {
  KF_UNROLL
  for (int c = tid; c < A_ROWS * A_COLS / 8; c += THREADS) {
    const int r = c / (A_COLS / 8);
    const int e = (c % (A_COLS / 8)) * 8;
#if KF_TRANS_A
    const int gk = k0 + r, gm = m0 + e; /* A stored K x M */
    const bool ok = gk < K && gm < M;
    const kf_u16* src = A + (ok ? (size_t)gk * (size_t)M + (size_t)gm : 0);
#else
    const int gm = m0 + r, gk = k0 + e; /* A stored M x K */
    const bool ok = gm < M && gk < K;
    const kf_u16* src = A + (ok ? (size_t)gm * (size_t)K + (size_t)gk : 0);
#endif
    kf_cp_async16(As + r * A_LD + e, src, ok);
  }
  KF_UNROLL
  for (int c = tid; c < B_ROWS * B_COLS / 8; c += THREADS) {
    const int r = c / (B_COLS / 8);
    const int e = (c % (B_COLS / 8)) * 8;
#if KF_TRANS_B
    const int gn = n0 + r, gk = k0 + e; /* B stored N x K */
    const bool ok = gn < N && gk < K;
    const kf_u16* src = B + (ok ? (size_t)gn * (size_t)K + (size_t)gk : 0);
#else
    const int gk = k0 + r, gn = n0 + e; /* B stored K x N */
    const bool ok = gk < K && gn < N;
    const kf_u16* src = B + (ok ? (size_t)gk * (size_t)N + (size_t)gn : 0);
#endif
    kf_cp_async16(Bs + r * B_LD + e, src, ok);
  }
}

/* op(A)[m][k] and op(B)[k][n] of a staged tile. */
#if KF_TRANS_A
#define A_AT(As, m, k) (As)[(k) * A_LD + (m)]
#else
#define A_AT(As, m, k) (As)[(m) * A_LD + (k)]
#endif
#if KF_TRANS_B
#define B_AT(Bs, k, n) (Bs)[(n) * B_LD + (k)]
#else
#define B_AT(Bs, k, n) (Bs)[(k) * B_LD + (n)]
#endif

__device__ __forceinline__ unsigned kf_pack(kf_u16 lo, kf_u16 hi) { return (unsigned)lo | ((unsigned)hi << 16); }

__device__ __forceinline__ void kf_mma(float* d, const unsigned* a, const unsigned* b) {
#if defined(KF_DTYPE_BF16)
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

KF_KERNEL void __launch_bounds__(THREADS)
KF_KERNEL_NAME(int M, int N, int K, float alpha, const kf_in_t* KF_RESTRICT A_in,
               const kf_in_t* KF_RESTRICT B_in, float beta, float* KF_RESTRICT C,
               const float* KF_RESTRICT bias) {
  extern __shared__ __align__(16) kf_u16 kf_smem[];
  const kf_u16* A = (const kf_u16*)A_in;
  const kf_u16* B = (const kf_u16*)B_in;
  const int tid = (int)threadIdx.x;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp / WN;
  const int warp_n = warp % WN;
  const int g = lane >> 2; /* mma groupID */
  const int t = lane & 3;  /* thread in group */
  const int m0 = (int)blockIdx.y * BM;
  const int n0 = (int)blockIdx.x * BN;
  const size_t batch = (size_t)blockIdx.z;
  A += batch * (size_t)M * (size_t)K;
  B += batch * (size_t)K * (size_t)N;
  C += batch * (size_t)M * (size_t)N;

  float acc[MT][NT][4];
  KF_UNROLL
  for (int i = 0; i < MT; ++i)
    KF_UNROLL
    for (int j = 0; j < NT; ++j)
      KF_UNROLL
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

  const int k_tiles = (K + BK - 1) / BK;
  KF_UNROLL
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      kf_u16* st = kf_smem + s * STAGE_ELEMS;
      kf_load_stage(st, st + A_ROWS * A_LD, A, B, M, N, K, m0, n0, s * BK, tid);
    }
    kf_cp_async_commit(); /* one group per stage, empty or not, keeps the count */
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    kf_cp_async_wait<STAGES - 2>(); /* tile kt has landed (this thread's copies) */
    __syncthreads();                /* ... everyone's; and stage kt-1 is free */
    const int next = kt + STAGES - 1;
    if (next < k_tiles) {
      kf_u16* st = kf_smem + (next % STAGES) * STAGE_ELEMS;
      kf_load_stage(st, st + A_ROWS * A_LD, A, B, M, N, K, m0, n0, next * BK, tid);
    }
    kf_cp_async_commit();

    const kf_u16* As = kf_smem + (kt % STAGES) * STAGE_ELEMS;
    const kf_u16* Bs = As + A_ROWS * A_LD;
    KF_UNROLL
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[MT][4];
      unsigned b[NT][2];
      KF_UNROLL
      for (int i = 0; i < MT; ++i) {
        const int r = warp_m * WTM + i * 16 + g;
        const int c = kk + 2 * t;
        a[i][0] = kf_pack(A_AT(As, r, c), A_AT(As, r, c + 1));
        a[i][1] = kf_pack(A_AT(As, r + 8, c), A_AT(As, r + 8, c + 1));
        a[i][2] = kf_pack(A_AT(As, r, c + 8), A_AT(As, r, c + 9));
        a[i][3] = kf_pack(A_AT(As, r + 8, c + 8), A_AT(As, r + 8, c + 9));
      }
      KF_UNROLL
      for (int j = 0; j < NT; ++j) {
        const int n = warp_n * WTN + j * 8 + g;
        const int k = kk + 2 * t;
        b[j][0] = kf_pack(B_AT(Bs, k, n), B_AT(Bs, k + 1, n));
        b[j][1] = kf_pack(B_AT(Bs, k + 8, n), B_AT(Bs, k + 9, n));
      }
      KF_UNROLL
      for (int i = 0; i < MT; ++i)
        KF_UNROLL
        for (int j = 0; j < NT; ++j) kf_mma(acc[i][j], a[i], b[j]);
    }
  }
  kf_cp_async_wait<0>();

  /* Epilogue: c0,c1 at (g, 2t..2t+1), c2,c3 at (g+8, 2t..2t+1) of each tile. */
  KF_UNROLL
  for (int i = 0; i < MT; ++i) {
    KF_UNROLL
    for (int j = 0; j < NT; ++j) {
      KF_UNROLL
      for (int r = 0; r < 4; ++r) {
        const int m = m0 + warp_m * WTM + i * 16 + g + (r >= 2 ? 8 : 0);
        const int n = n0 + warp_n * WTN + j * 8 + 2 * t + (r & 1);
        if (m >= M || n >= N) continue;
        const size_t idx = (size_t)m * (size_t)N + (size_t)n;
        float out = alpha * acc[i][j][r];
        if (beta != 0.0f) out += beta * C[idx];
#if KF_BIAS
        out += bias[n];
#endif
        C[idx] = kf_activation(out);
      }
    }
  }
}
