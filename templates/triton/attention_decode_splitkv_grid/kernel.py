"""Split-KV attention across programs for decode (few queries, many keys):
O = softmax(scale * Q K^T + mask) V per batch and head. Grid: batch x head
along x, SPLIT chunks of the key range along y; BLOCK_M covers every query
(S <= BLOCK_M).

Program (bh, s) runs the online softmax over chunk s, the contiguous keys
[s * CHUNK, (s + 1) * CHUNK) (whole BLOCK_N blocks; the last chunks may be
short or empty), and stores its partial, the running max m, the sum l and
the unnormalised accumulator, to the `partials` workspace. Then, as
flash-decoding does, the head's programs count themselves on the zeroed
`tickets` workspace: the store, a barrier, an acq_rel atomic add. The
program drawing the last ticket combines the chunks in chunk order (row max
over the chunks, sums and accumulators rescaled to it), writes O and puts
the ticket back to 0. Q, K, V packed row-major (B x H x rows x D), O in
f32; both products in IEEE f32 precision, as attention_flash."""

import triton
import triton.language as tl


@triton.jit
def attention_decode_splitkv_grid(B, H, S, SK, D, scale, Q, K, V, O, partials, tickets,
                                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                                  SPLIT: tl.constexpr, CAUSAL: tl.constexpr):
    bh = tl.program_id(0).to(tl.int64)
    split = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(Q + bh * S * D + offs_m[:, None] * D + offs_d[None, :],
                mask=(offs_m[:, None] < S) & (offs_d[None, :] < D), other=0.0).to(tl.float32)
    k_base = K + bh * SK * D
    v_base = V + bh * SK * D
    qk_scale = scale * 1.4426950408889634  # exp(x) = exp2(x * log2(e))
    chunk = tl.cdiv(tl.cdiv(SK, SPLIT), BLOCK_N) * BLOCK_N  # keys per program, whole blocks
    lo = split * chunk
    hi = tl.minimum(lo + chunk, SK)

    m_i = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    for start_n in range(lo, hi, BLOCK_N):
        cols = start_n + offs_n
        in_range = cols < hi
        k = tl.load(k_base + cols[None, :] * D + offs_d[:, None],
                    mask=in_range[None, :] & (offs_d[:, None] < D), other=0.0)
        qk = tl.dot(q, k.to(tl.float32), input_precision="ieee") * qk_scale
        visible = in_range[None, :]
        if CAUSAL:  # query i sees keys j <= i + (SK - S)
            visible = visible & (cols[None, :] <= offs_m[:, None] + (SK - S))
        qk = tl.where(visible, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        # A row may have seen no visible key yet (its max still -inf):
        # subtract 0 there, so that its weights are exp2(-inf) = 0, not NaN.
        m_ref = tl.where(m_new == -float("inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_ref)
        p = tl.exp2(qk - m_ref[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * D + offs_d[None, :],
                    mask=in_range[:, None] & (offs_d[None, :] < D), other=0.0)
        acc = tl.dot(p, v.to(tl.float32), acc * alpha[:, None], input_precision="ieee")
        m_i = m_new

    # A chunk's partial: m, l, then the BLOCK_M x BLOCK_D accumulator.
    part_elems = BLOCK_M * (BLOCK_D + 2)
    head_partials = partials + bh * SPLIT * part_elems
    offs_acc = 2 * BLOCK_M + offs_m[:, None] * BLOCK_D + offs_d[None, :]
    mine = head_partials + split * part_elems
    tl.store(mine + offs_m, m_i)
    tl.store(mine + BLOCK_M + offs_m, l_i)
    tl.store(mine + offs_acc, acc)
    tl.debug_barrier()
    ticket = tl.atomic_add(tickets + bh, 1, sem="acq_rel")
    if ticket == SPLIT - 1:
        # Key 0 is in chunk 0 and every query sees it, so the row max is
        # finite; an empty chunk's weight is exp2(-inf) = 0.
        m_row = tl.full([BLOCK_M], -float("inf"), dtype=tl.float32)
        for s in range(SPLIT):
            m_row = tl.maximum(m_row, tl.load(head_partials + s * part_elems + offs_m))
        l_row = tl.zeros([BLOCK_M], dtype=tl.float32)
        out = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
        for s in range(SPLIT):  # chunk order: the same sum whichever program is last
            part = head_partials + s * part_elems
            w = tl.exp2(tl.load(part + offs_m) - m_row)
            l_row += tl.load(part + BLOCK_M + offs_m) * w
            out += tl.load(part + offs_acc) * w[:, None]
        out = out / l_row[:, None]
        tl.store(O + bh * S * D + offs_m[:, None] * D + offs_d[None, :], out,
                 mask=(offs_m[:, None] < S) & (offs_d[None, :] < D))
        tl.store(tickets + bh, 0)  # every chunk has drawn: leave the workspace zeroed
