// Naive GEMM (NN, f32, one thread per element of C) with a fault planted
// per FLAW value, for the tuner's isolation tests (tests/tools/isolation_test.cpp).
#ifndef BX
#define BX 8
#endif
#ifndef FLAW
#define FLAW 0
#endif

#if FLAW == 3
#error "planted compile error (FLAW=3)"
#endif

KF_KERNEL void KF_KERNEL_NAME(const int M, const int N, const int K, const float alpha,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT A,
                              KF_GLOBAL const kf_in_t* KF_RESTRICT B, const float beta,
                              KF_GLOBAL float* KF_RESTRICT C, KF_GLOBAL const float* KF_RESTRICT bias) {
  const int j = KF_BLOCK_X * BX + KF_THREAD_X;
  const int i = KF_BLOCK_Y * 4 + KF_THREAD_Y;
  const int b = KF_BLOCK_Z;
  if (i >= M || j >= N) return;
  const long a0 = (long)b * M * K, b0 = (long)b * K * N, c0 = (long)b * M * N;
#if FLAW == 2
  // Spins on a volatile read of an input that never holds this value: no
  // compiler may remove the loop, and it never ends.
  while (((volatile KF_GLOBAL const float*)C)[0] != 1.0e30f) {
  }
#endif
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += KF_LOAD_IN(A, a0 + (long)i * K + k) * KF_LOAD_IN(B, b0 + (long)k * N + j);
  const long c = c0 + (long)i * N + j;
  float out = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[c];
#if KF_BIAS
  out += bias[j];
#endif
#if FLAW == 1
  // Far outside any allocation: the process faults.
  C[c + (1L << 40)] = out;
#elif FLAW == 4
  C[c] = kf_activation(out) * 1.01f + 1.0f;
#elif FLAW == 5
  C[c] = NAN;
#else
  C[c] = kf_activation(out);
#endif
}
