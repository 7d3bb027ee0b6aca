# A small Triton kernel whose binaries (made by make_binaries.py) the C++
# tests load through the fake CUDA and HIP drivers: y = alpha * x.
import triton
import triton.language as tl


@triton.jit
def scale(X, Y, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(Y + offsets, tl.load(X + offsets, mask=inside) * alpha, mask=inside)
