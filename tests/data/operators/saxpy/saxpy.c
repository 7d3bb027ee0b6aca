// y = a * x + y, PERTHREAD elements per thread, for the declared-operator
// tests. FLAW=1 leaves the last element unchanged: validation must catch it.
#ifndef BLOCK
#define BLOCK 64  // threads per block
#endif
#ifndef PERTHREAD
#define PERTHREAD 1  // elements per thread, BLOCK apart
#endif
#ifndef FLAW
#define FLAW 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int n, const float a, KF_GLOBAL const kf_in_t* KF_RESTRICT x,
                              KF_GLOBAL float* KF_RESTRICT y) {
  for (int r = 0; r < PERTHREAD; ++r) {
    const int i = (KF_BLOCK_X * PERTHREAD + r) * BLOCK + KF_THREAD_X;
    if (i < n - FLAW) y[i] = a * KF_LOAD_IN(x, i) + y[i];
  }
}
