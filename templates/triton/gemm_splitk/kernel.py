"""Split-K GEMM for decode shapes (few rows of C): C = alpha * op(A) op(B)
+ beta * C, f16/bf16 in, f32 accumulate and C, any layout through strides,
batch on grid z.

K is split SPLIT_K ways inside each program, not across programs: slice s
covers the contiguous range [s * KS, (s + 1) * KS) of K (KS a multiple of
BLOCK_K), and each step loads one BLOCK_K block of every slice at once, a
[SPLIT_K, BLOCK_M, BLOCK_K] block of A and a [SPLIT_K, BLOCK_K, BLOCK_N]
block of B, multiplied by one batched tl.dot into SPLIT_K accumulators (the
slices spread over the warps). The slices are summed in registers at the
end and the program alone reads and writes its tile of C, so any beta is
exact and nothing depends on the order in which programs run.
gemm_splitk_grid splits K across programs instead, through workspaces."""

import triton
import triton.language as tl


@triton.jit
def gemm_splitk(M, N, K, alpha, A, B, beta, C,
                stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_cb, stride_cm, stride_cn,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(2).to(tl.int64)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    # Decode shapes have one or two rows of tiles: walk them column-major
    # so that neighbouring programs share the panel of A.
    pid_m = pid % tl.cdiv(M, BLOCK_M)
    pid_n = pid // tl.cdiv(M, BLOCK_M)
    ks = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K  # K per slice

    offs_s = tl.arange(0, SPLIT_K)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # k index of element (s, kk) at step k0: s * ks + k0 + kk
    ka = offs_s[:, None, None] * ks + offs_k[None, None, :]  # [SPLIT_K, 1, BLOCK_K]
    kb = offs_s[:, None, None] * ks + offs_k[None, :, None]  # [SPLIT_K, BLOCK_K, 1]
    a_ptrs = A + batch * stride_ab + offs_m[None, :, None] * stride_am + ka * stride_ak
    b_ptrs = B + batch * stride_bb + kb * stride_bk + offs_n[None, None, :] * stride_bn
    m_ok = offs_m[None, :, None] < M
    n_ok = offs_n[None, None, :] < N
    acc = tl.zeros((SPLIT_K, BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, ks, BLOCK_K):
        # ks is a multiple of BLOCK_K: a slice never reads into the next one.
        a = tl.load(a_ptrs, mask=m_ok & (ka < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(kb < K - k0) & n_ok, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    out = tl.sum(acc, axis=0) * alpha
    c_ptrs = C + batch * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if beta != 0:  # C is not read when beta is 0 (it may hold NaN)
        out += beta * tl.load(c_ptrs, mask=c_mask, other=0.0)
    tl.store(c_ptrs, out, mask=c_mask)
