// The stencil5 reference template: one thread per grid row, a plain loop over
// its columns, trusted to validate the tuned template (operator.json's
// reference.template in the tests), in kf_ref_t: double where the device has it.
#ifndef ROWS
#define ROWS 1  // grid rows (threads) per block
#endif

KF_KERNEL void KF_KERNEL_NAME(const int H, const int W, KF_GLOBAL const kf_in_t* KF_RESTRICT X,
                              KF_GLOBAL kf_ref_t* KF_RESTRICT Y) {
  const int i = KF_BLOCK_Y * ROWS + KF_THREAD_Y;
  if (i >= H) return;
  const int pitch = W + 2;
  for (int j = 0; j < W; ++j) {
    const int c = (i + 1) * pitch + (j + 1);
    const kf_ref_t north_south = (kf_ref_t)KF_LOAD_IN(X, c - pitch) + KF_LOAD_IN(X, c + pitch);
    const kf_ref_t west_east = (kf_ref_t)KF_LOAD_IN(X, c - 1) + KF_LOAD_IN(X, c + 1);
    Y[i * W + j] = (kf_ref_t)0.5 * KF_LOAD_IN(X, c) - (kf_ref_t)0.125 * (north_south + west_east);
  }
}
