// Gathers x through perm, then stores it quantized to int8 and rounded to
// f16: a declared operator with integer and f16 outputs. FLAW=1 rounds
// toward zero in both, which validation must catch.
#ifndef BLOCK
#define BLOCK 64  // threads per block
#endif
#ifndef FLAW
#define FLAW 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int n, const float inv_scale, KF_GLOBAL const int* KF_RESTRICT perm,
                              KF_GLOBAL const float* KF_RESTRICT x, KF_GLOBAL char* KF_RESTRICT q,
                              KF_GLOBAL half* KF_RESTRICT h) {
  const int i = KF_BLOCK_X * BLOCK + KF_THREAD_X;
  if (i >= n) return;
  const float v = x[min(perm[i], n - 1)];
  const float s = clamp(v * inv_scale, -127.0f, 127.0f);
#if FLAW
  q[i] = (char)s;  // truncates
  vstore_half_rtz(v, i, h);
#else
  q[i] = (char)rint(s);
  vstore_half_rte(v, i, h);
#endif
}
