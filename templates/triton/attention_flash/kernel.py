"""Flash-attention forward: O = softmax(scale * Q K^T + mask) V per batch
and head, one BLOCK_M block of queries per program streaming BLOCK_N keys at
a time with an online softmax (running max and sum in f32); the head
dimension padded to BLOCK_D in registers. Q, K, V packed row-major
(B x H x rows x D), O in f32. Both products in IEEE f32 precision (f16 and
bf16 operands multiply exactly into f32; P stays in f32)."""

import triton
import triton.language as tl


@triton.jit
def attention_fwd(B, H, S, SK, D, scale, Q, K, V, O,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q_base = Q + bh * S * D
    k_base = K + bh * SK * D
    v_base = V + bh * SK * D
    q = tl.load(q_base + offs_m[:, None] * D + offs_d[None, :], mask=(offs_m[:, None] < S) & (offs_d[None, :] < D),
                other=0.0)
    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    qk_scale = scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    hi = SK
    if CAUSAL:  # query i sees keys j <= i + (SK - S)
        hi = tl.minimum(SK, (start_m + 1) * BLOCK_M + SK - S)
    # The first key block holds key 0, which every query sees: m_i is finite
    # after it, and no row divides by a zero sum.
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * D + offs_d[:, None], mask=(cols[None, :] < SK) & (offs_d[:, None] < D),
                    other=0.0)
        qk = tl.dot(q, k, input_precision="ieee") * qk_scale
        visible = cols[None, :] < SK
        if CAUSAL:
            visible = visible & (cols[None, :] <= offs_m[:, None] + (SK - S))
        qk = tl.where(visible, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * D + offs_d[None, :], mask=(cols[:, None] < SK) & (offs_d[None, :] < D),
                    other=0.0)
        acc = tl.dot(p, v.to(tl.float32), acc * alpha[:, None], input_precision="ieee")
        m_i = m_new
    acc = acc / l_i[:, None]
    o_base = O + bh * S * D
    tl.store(o_base + offs_m[:, None] * D + offs_d[None, :], acc, mask=(offs_m[:, None] < S) & (offs_d[None, :] < D))
