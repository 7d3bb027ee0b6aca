"""Split-KV attention for decode (few queries, many keys): O = softmax(scale
* Q K^T + mask) V per batch and head. One program per batch x head (and per
BLOCK_M queries); its key range [0, hi) is split into SPLIT contiguous
chunks of whole BLOCK_N blocks, and each step takes one block of every
chunk at once: Q K^T and P V are batched tl.dot over the chunks, each chunk
keeping its own running max, sum and accumulator (flash-decoding's
partials). After the loop the partials are combined in registers: the row
max over the chunks, every chunk's sum and accumulator rescaled to it, O =
their sums' quotient. The combine needs no memory;
attention_decode_splitkv_grid splits the keys across programs instead,
through workspaces. Q, K,
V packed row-major (B x H x rows x D), O in f32; both products in IEEE f32
precision, as attention_flash."""

import triton
import triton.language as tl


@triton.jit
def attention_decode_splitkv(B, H, S, SK, D, scale, Q, K, V, O,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                             SPLIT: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    offs_s = tl.arange(0, SPLIT)
    q = tl.load(Q + bh * S * D + offs_m[:, None] * D + offs_d[None, :],
                mask=(offs_m[:, None] < S) & (offs_d[None, :] < D), other=0.0)
    q = tl.broadcast_to(q[None, :, :], (SPLIT, BLOCK_M, BLOCK_D)).to(tl.float32)
    k_base = K + bh * SK * D
    v_base = V + bh * SK * D
    qk_scale = scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    hi = SK
    if CAUSAL:  # query i sees keys j <= i + (SK - S)
        hi = tl.minimum(SK, (start_m + 1) * BLOCK_M + SK - S)
    chunk = tl.cdiv(tl.cdiv(hi, SPLIT), BLOCK_N) * BLOCK_N  # keys per split, whole blocks

    m_i = tl.full([SPLIT, BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([SPLIT, BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([SPLIT, BLOCK_M, BLOCK_D], dtype=tl.float32)
    for start_n in range(0, chunk, BLOCK_N):
        cols = offs_s[:, None] * chunk + start_n + offs_n[None, :]  # [SPLIT, BLOCK_N] key indices
        in_range = cols < hi
        k = tl.load(k_base + cols[:, None, :] * D + offs_d[None, :, None],
                    mask=in_range[:, None, :] & (offs_d[None, :, None] < D), other=0.0)
        qk = tl.dot(q, k.to(tl.float32), input_precision="ieee") * qk_scale  # [SPLIT, BLOCK_M, BLOCK_N]
        visible = in_range[:, None, :]
        if CAUSAL:
            visible = visible & (cols[:, None, :] <= offs_m[None, :, None] + (SK - S))
        qk = tl.where(visible, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 2))
        # A chunk may have seen no visible key yet (its max still -inf):
        # subtract 0 there, so that its weights are exp2(-inf) = 0, not NaN.
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_ref)
        p = tl.exp2(qk - m_ref[:, :, None])
        l_i = l_i * alpha + tl.sum(p, 2)
        v = tl.load(v_base + cols[:, :, None] * D + offs_d[None, None, :],
                    mask=in_range[:, :, None] & (offs_d[None, None, :] < D), other=0.0)
        acc = tl.dot(p, v.to(tl.float32), acc * alpha[:, :, None], input_precision="ieee")
        m_i = m_new
    # Combine the chunks. Key 0 is in chunk 0 and every query sees it, so
    # the row max is finite; an empty chunk's weight is exp2(-inf) = 0.
    m_row = tl.max(m_i, 0)
    w = tl.exp2(m_i - m_row[None, :])  # [SPLIT, BLOCK_M]
    l_row = tl.sum(l_i * w, 0)
    out = tl.sum(acc * w[:, :, None], 0) / l_row[:, None]
    tl.store(O + bh * S * D + offs_m[:, None] * D + offs_d[None, :], out,
             mask=(offs_m[:, None] < S) & (offs_d[None, :] < D))
