"""Persistent GEMM for Hopper (sm_90a) with device-side tensor descriptors:
C = alpha * op(A) op(B) + beta * C, f16/bf16 in, f32 accumulate and C.
A fixed number of programs (NUM_SMS, or fewer when there are fewer tiles)
walks the batch x tile space with stride NUM_SMS, tiles of each batch in
grouped order. Every operand moves through a tensor descriptor built on the
device (tl.make_tensor_descriptor: TMA loads and stores, the descriptors in
Triton's global scratch); out-of-range rows and columns of a box read as
zero and are not written, so M, N and K need no masks. The layout is a
constexpr: a transposed operand is read in its stored orientation and
transposed in registers (wgmma takes either)."""

import triton
import triton.language as tl


@triton.jit
def gemm_persistent_tma(M, N, K, batch, alpha, A, B, beta, C,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, TRANS_A: tl.constexpr,
                        TRANS_B: tl.constexpr):
    # Descriptors over [batch, rows, cols] of each operand as stored
    # (row-major, the last stride 1).
    if TRANS_A:  # A stored K x M
        a_desc = tl.make_tensor_descriptor(A, shape=[batch, K, M], strides=[M * K, M, 1],
                                           block_shape=[1, BLOCK_K, BLOCK_M])
    else:
        a_desc = tl.make_tensor_descriptor(A, shape=[batch, M, K], strides=[M * K, K, 1],
                                           block_shape=[1, BLOCK_M, BLOCK_K])
    if TRANS_B:  # B stored N x K
        b_desc = tl.make_tensor_descriptor(B, shape=[batch, N, K], strides=[N * K, K, 1],
                                           block_shape=[1, BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(B, shape=[batch, K, N], strides=[N * K, N, 1],
                                           block_shape=[1, BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(C, shape=[batch, M, N], strides=[M * N, N, 1],
                                       block_shape=[1, BLOCK_M, BLOCK_N])

    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_batch = num_pid_m * num_pid_n
    num_tiles = batch * tiles_per_batch
    num_pid_in_group = GROUP_M * num_pid_n
    for tile in range(tl.program_id(0), num_tiles, NUM_SMS):
        bi = tile // tiles_per_batch
        t = tile % tiles_per_batch
        group_id = t // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
        off_m = (first_pid_m + ((t % num_pid_in_group) % group_size_m)) * BLOCK_M
        off_n = ((t % num_pid_in_group) // group_size_m) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            if TRANS_A:
                a = tl.trans(a_desc.load([bi, k0, off_m]).reshape(BLOCK_K, BLOCK_M))
            else:
                a = a_desc.load([bi, off_m, k0]).reshape(BLOCK_M, BLOCK_K)
            if TRANS_B:
                b = tl.trans(b_desc.load([bi, off_n, k0]).reshape(BLOCK_N, BLOCK_K))
            else:
                b = b_desc.load([bi, k0, off_n]).reshape(BLOCK_K, BLOCK_N)
            acc = tl.dot(a, b, acc)
        acc = acc * alpha
        if beta != 0:  # C is not read when beta is 0 (it may hold NaN)
            acc += beta * c_desc.load([bi, off_m, off_n]).reshape(BLOCK_M, BLOCK_N)
        c_desc.store([bi, off_m, off_n], acc.reshape(1, BLOCK_M, BLOCK_N))
