"""A kernel that parses but does not compile: a store of a BLOCK-wide value
through a 2 * BLOCK-wide pointer block (shapes do not broadcast)."""

import triton
import triton.language as tl


@triton.jit
def bad_shapes(X, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    wide = tl.arange(0, 2 * BLOCK)
    tl.store(X + wide, tl.load(X + offs, mask=offs < n), mask=wide < n)
