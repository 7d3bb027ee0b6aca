/* transpose_tiled: Y[b][j][i] = X[b][i][j] (contract:
 * generator/transpose_operator.hpp). Portable (docs/prelude.md).
 *
 * A work-group moves the TILE x TILE tile of X at rows r0.., cols c0.. with
 * TILE x BY threads: each thread reads TILE / BY elements down a column of
 * the tile (consecutive threads read consecutive columns: coalesced), stores
 * them in local memory, and after a barrier writes the transposed tile along
 * Y's rows (again consecutive threads, consecutive addresses). PAD floats per
 * local row keep the column reads off one bank. Tails are guarded. */

#ifndef TILE
#define TILE 16 /* tile edge */
#endif
#ifndef BY
#define BY 8 /* threads along the tile's rows */
#endif
#ifndef PAD
#define PAD 1 /* extra floats per local row */
#endif
#ifndef KF_KERNEL_NAME
#define KF_KERNEL_NAME transpose_tiled
#endif

#if (TILE % BY) || (BY > TILE)
#error "transpose_tiled: invalid configuration (see the manifest's constraints)"
#endif

#define TS_LD (TILE + PAD)

KF_KERNEL void KF_LAUNCH_BOUNDS(TILE, BY, 1)
KF_KERNEL_NAME(int rows, int cols, KF_GLOBAL const kf_in_t* KF_RESTRICT X, KF_GLOBAL float* KF_RESTRICT Y) {
  KF_LOCAL float tile[TILE * TS_LD];
  const int tx = KF_THREAD_X;
  const int ty = KF_THREAD_Y;
  const int c0 = KF_BLOCK_X * TILE;
  const int r0 = KF_BLOCK_Y * TILE;
  const size_t off = (size_t)KF_BLOCK_Z * (size_t)rows * (size_t)cols;
  X += off;
  Y += off;

  /* Read X[r0 + i][c0 + tx] into tile[i][tx]. */
  KF_UNROLL
  for (int i = ty; i < TILE; i += BY) {
    const int r = r0 + i;
    const int c = c0 + tx;
    if (r < rows && c < cols) tile[i * TS_LD + tx] = KF_LOAD_IN(X, (size_t)r * (size_t)cols + (size_t)c);
  }
  KF_BARRIER();
  /* Write Y[c0 + i][r0 + tx] = X[r0 + tx][c0 + i] = tile[tx][i]. */
  KF_UNROLL
  for (int i = ty; i < TILE; i += BY) {
    const int c = c0 + i;
    const int r = r0 + tx;
    if (c < cols && r < rows) Y[(size_t)c * (size_t)rows + (size_t)r] = tile[tx * TS_LD + i];
  }
}
