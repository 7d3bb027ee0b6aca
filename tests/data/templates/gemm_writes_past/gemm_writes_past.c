// Naive GEMM, one thread per element of C, for the tuner's guard-zone test.
// OOB=1 also writes the two floats past the end of C (y[n], y[n+1]): every
// element of C is right, so only the guard after C can tell.
#ifndef BX
#define BX 8  // threads per block along N
#endif
#ifndef OOB
#define OOB 0  // 1 plants the bug
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
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += KF_LOAD_IN(A, a0 + (long)i * K + k) * KF_LOAD_IN(B, b0 + (long)k * N + j);
  const long c = c0 + (long)i * N + j;
  float out = beta != 0.0f ? alpha * acc + beta * C[c] : alpha * acc;
#if KF_BIAS
  out += bias[j];
#endif
  C[c] = kf_activation(out);
#if OOB
  if (c == 0) {
    const long end = (long)KF_GRID_DIM_Z * M * N;
    C[end] = 1.0f;
    C[end + 1] = 2.0f;
  }
#endif
}
