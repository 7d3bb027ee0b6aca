// The rowstats reference template: one thread per row, the plainest loop,
// trusted to validate the tuned templates (operator.json's reference.template
// in the tests), in kf_ref_t: double where the device has it.
#ifndef ROWS
#define ROWS 1  // rows (threads) per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int rows, const int cols, const float s, KF_GLOBAL const kf_in_t* KF_RESTRICT x,
                              KF_GLOBAL kf_ref_t* KF_RESTRICT scaled, KF_GLOBAL kf_ref_t* KF_RESTRICT rowsum) {
  const int r = KF_BLOCK_X * ROWS + KF_THREAD_X;
  if (r >= rows) return;
  kf_ref_t sum = 0;
  for (int c = 0; c < cols; ++c) {
    const kf_ref_t v = KF_LOAD_IN(x, r * cols + c);
    scaled[r * cols + c] = (kf_ref_t)s * v;
    sum += v;
  }
  rowsum[r] = sum;
}
