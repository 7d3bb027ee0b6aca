/* rope_pairs: rotary position embedding of X (tokens x heads x head_dim)
 * into Y (contract: generator/rope_operator.hpp). Portable: written against
 * the kforge prelude (templates/prelude/, docs/prelude.md), so it runs as
 * OpenCL C, CUDA and HIP.
 *
 * A work-group (TX x RY threads) serves RY * HB consecutive heads of one
 * token. Thread (tx, ty) owns the pairs i = tx, tx + TX, ... of heads
 * (group's first head + ty * HB + k) for k < HB: it computes a pair's
 * angle, sine and cosine once and rotates that pair in all HB heads, since
 * the angle depends only on the position and i. Tokens and head groups lie
 * on grid x (no 65,535 limit). */

/* ---- tunable parameters (the generator defines them; defaults for a
 * standalone build) ---- */
#ifndef TX
#define TX 32 /* threads along the pairs of a head */
#endif
#ifndef RY
#define RY 4 /* threads across heads */
#endif
#ifndef HB
#define HB 2 /* heads per thread sharing one sine and cosine */
#endif

#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME rope_pairs
#endif

/* The pairing attribute; alone, the default (half). */
#if !defined(KF_PAIRING_HALF) && !defined(KF_PAIRING_INTERLEAVED)
#define KF_PAIRING_HALF 1
#endif

#if TX < 1 || RY < 1 || HB < 1
#error "rope_pairs: invalid configuration (see the manifest's constraints)"
#endif

/* Accurate library calls (never the native or intrinsic forms): the
 * tolerance assumes OpenCL's 4-ulp sin and cos and 3-ulp exp2 and log2. */
#if defined(KF_BACKEND_OPENCL)
#define ROPE_SIN(x) sin(x)
#define ROPE_COS(x) cos(x)
#define ROPE_EXP2(x) exp2(x)
#define ROPE_LOG2(x) log2(x)
#else
#define ROPE_SIN(x) sinf(x)
#define ROPE_COS(x) cosf(x)
#define ROPE_EXP2(x) exp2f(x)
#define ROPE_LOG2(x) log2f(x)
#endif

KF_KERNEL void KF_LAUNCH_BOUNDS(TX, RY, 1)
KF_KERNEL_NAME(int tokens, int heads, int head_dim, int pos0, float theta, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
               KF_GLOBAL float* KF_RESTRICT Y) {
  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int groups = (heads + RY * HB - 1) / (RY * HB); /* head groups per token */
  const int token = KF_BLOCK_X / groups;
  const int head0 = (KF_BLOCK_X % groups) * (RY * HB) + ty * HB;
  const int pairs = head_dim / 2; /* per head */
  if (token >= tokens) return;
  const float pos = (float)(pos0 + token);
  const float log2_theta = ROPE_LOG2(theta);

  for (int i = tx; i < pairs; i += TX) {
    /* inv_freq = theta^(-2i / D), as the reference; then the angle in f32. */
    const float angle = pos * ROPE_EXP2(-((float)(2 * i) / (float)head_dim) * log2_theta);
    const float s = ROPE_SIN(angle);
    const float c = ROPE_COS(angle);
#if defined(KF_PAIRING_INTERLEAVED)
    const int a = 2 * i, b = 2 * i + 1;
#else
    const int a = i, b = i + pairs;
#endif
    KF_UNROLL
    for (int k = 0; k < HB; ++k) {
      const int head = head0 + k;
      if (head >= heads) break;
      const size_t base = ((size_t)token * (size_t)heads + (size_t)head) * (size_t)head_dim;
      const float xa = KF_LOAD_IN(X, base + a);
      const float xb = KF_LOAD_IN(X, base + b);
      Y[base + a] = xa * c - xb * s;
      Y[base + b] = xb * c + xa * s;
    }
  }
}
