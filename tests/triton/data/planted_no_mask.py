"""The corpus softmax with its store's mask dropped (a planted bug): each row
writes BLOCK_N elements, past the row's end, and the last row past Y's."""

import triton
import triton.language as tl


@triton.jit
def softmax_row(rows, cols, X, Y, stride_x, stride_y, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    row0 = tl.program_id(0) * ROWS
    offs = tl.arange(0, BLOCK_N)
    mask = offs < cols
    for r in range(ROWS):
        row = row0 + r
        if row < rows:
            x = tl.load(X + row.to(tl.int64) * stride_x + offs, mask=mask, other=-float("inf")).to(tl.float32)
            e = tl.exp(x - tl.max(x, axis=0))
            e = tl.where(mask, e, 0.0)
            tl.store(Y + row.to(tl.int64) * stride_y + offs, e / tl.sum(e, axis=0))
