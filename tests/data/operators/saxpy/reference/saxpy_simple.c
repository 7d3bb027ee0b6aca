// The saxpy reference template: one thread per element, trusted to validate
// the tuned template (operator.json's reference.template in the tests).
#ifndef BLOCK
#define BLOCK 1  // threads per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int n, const float a, KF_GLOBAL const kf_in_t* KF_RESTRICT x,
                              KF_GLOBAL float* KF_RESTRICT y) {
  const int i = KF_BLOCK_X * BLOCK + KF_THREAD_X;
  if (i < n) y[i] = a * KF_LOAD_IN(x, i) + y[i];
}
