"""Split-K GEMM across programs for decode shapes (few rows of C): C =
alpha * op(A) op(B) + beta * C, f16/bf16 in, f32 accumulate and C, any
layout through strides. Grid: tiles of C x SPLIT_K slices x batch.

Program (tile, s) multiplies slice s of K, the contiguous range [s * KS,
(s + 1) * KS) (KS a multiple of BLOCK_K; the last slices may be short or
empty), and stores its f32 partial tile to the `partials` workspace. The
tile's programs then count themselves on the zeroed `tickets` workspace:
the store, a barrier (every thread's store is issued before the ticket),
an acq_rel atomic add (releases the partial, acquires the others'). The
program drawing the last ticket sums the partials in slice order, so the
result does not depend on which program finished last, applies alpha and
beta once (C is not read when beta is 0), and puts its ticket back to 0
for the next launch."""

import triton
import triton.language as tl


@triton.jit
def gemm_splitk_grid(M, N, K, alpha, A, B, beta, C,
                     stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_cb, stride_cm,
                     stride_cn, partials, tickets,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
    pid = tl.program_id(0)
    split = tl.program_id(1)
    batch = tl.program_id(2).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    # Decode shapes have one or two rows of tiles: walk them column-major
    # so that neighbouring programs share the panel of A.
    pid_m = pid % tiles_m
    pid_n = pid // tiles_m
    tile = batch * tiles_m * tl.cdiv(N, BLOCK_N) + pid  # the tile's ticket, across the batch
    ks = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K  # K per slice
    k_lo = split * ks
    k_hi = tl.minimum(k_lo + ks, K)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = A + batch * stride_ab + offs_m[:, None] * stride_am + (k_lo + offs_k[None, :]) * stride_ak
    b_ptrs = B + batch * stride_bb + (k_lo + offs_k[:, None]) * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(k_lo, k_hi, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_hi - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_hi - k0) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # Whole tiles, tails included: the reduction reads every element back.
    tile_elems = BLOCK_M * BLOCK_N
    offs_tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    tile_partials = partials + tile * SPLIT_K * tile_elems
    tl.store(tile_partials + split * tile_elems + offs_tile, acc)
    tl.debug_barrier()
    ticket = tl.atomic_add(tickets + tile, 1, sem="acq_rel")
    if ticket == SPLIT_K - 1:
        out = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for s in range(SPLIT_K):  # slice order: the same sum whichever program is last
            out += tl.load(tile_partials + s * tile_elems + offs_tile)
        out = out * alpha
        c_ptrs = C + batch * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
        c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        if beta != 0:  # C is not read when beta is 0 (it may hold NaN)
            out += beta * tl.load(c_ptrs, mask=c_mask, other=0.0)
        tl.store(c_ptrs, out, mask=c_mask)
        tl.store(tickets + tile, 0)  # every program of the tile has drawn: leave the workspace zeroed
