// Two outputs from one pass over each row: scaled = s * x, and rowsum, the
// sum of the row. One thread per row, ROWS rows per block, so rows leaves a
// tail. FLAW=1 never writes the last row's sum: the poisoned output catches it.
#ifndef ROWS
#define ROWS 4  // rows (threads) per block
#endif
#ifndef FLAW
#define FLAW 0  // 1 plants the bug
#endif

KF_KERNEL void KF_KERNEL_NAME(const int rows, const int cols, const float s, KF_GLOBAL const kf_in_t* KF_RESTRICT x,
                              KF_GLOBAL float* KF_RESTRICT scaled, KF_GLOBAL float* KF_RESTRICT rowsum) {
  const int r = KF_BLOCK_X * ROWS + KF_THREAD_X;
  if (r >= rows) return;
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) {
    const float v = KF_LOAD_IN(x, r * cols + c);
    scaled[r * cols + c] = s * v;
    sum += v;
  }
  if (!(FLAW && r == rows - 1)) rowsum[r] = sum;
}
