"""Y = X / sqrt(mean(X^2) + eps) * W row by row, the row held in registers
(BLOCK_N >= cols), ROWS rows per program, f32 arithmetic and Y."""

import triton
import triton.language as tl


@triton.jit
def rmsnorm_row(rows, cols, eps, X, W, Y, stride_x, stride_y,
                BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    row0 = tl.program_id(0) * ROWS
    offs = tl.arange(0, BLOCK_N)
    mask = offs < cols
    w = tl.load(W + offs, mask=mask, other=0.0).to(tl.float32)
    for r in range(ROWS):
        row = row0 + r
        if row < rows:
            x = tl.load(X + row.to(tl.int64) * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
            mean_sq = tl.sum(x * x, axis=0) / cols
            inv = 1.0 / tl.sqrt(mean_sq + eps)
            tl.store(Y + row.to(tl.int64) * stride_y + offs, x * inv * w, mask=mask)
