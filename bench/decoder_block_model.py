"""The decoder block's shapes, weights and inputs, and the block itself in
float64 NumPy (the reference), f32 NumPy and f32 PyTorch eager: the
baselines of bench/decoder_block.py. The math is the one kforge's operators
compute (docs/operators.md): rmsnorm x / sqrt(mean(x^2) + eps) * w; rope with
the rotate-half pairing; causal attention aligned at the bottom right; the
SwiGLU gate silu(gate) * up over a packed gate|up projection."""
from dataclasses import asdict, dataclass

import numpy as np

EPS = 1e-5
THETA = 10000.0


@dataclass
class BlockShape:
    hidden: int
    heads: int
    mlp: int
    seq: int
    context: int

    def __post_init__(self):
        if self.hidden % self.heads or (self.hidden // self.heads) % 2:
            raise SystemExit(f"--hidden {self.hidden} / --heads {self.heads} must give an even head dimension")

    @property
    def head_dim(self):
        return self.hidden // self.heads

    def as_dict(self):
        return dict(asdict(self), head_dim=self.head_dim)


class Weights:
    """Random f32 weights scaled by 1/sqrt(fan-in), so activations stay O(1)."""

    def __init__(self, shape, rng):
        h, i = shape.hidden, shape.mlp
        self.shape = shape

        def w(k, n):
            return (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)

        self.wq, self.wk, self.wv, self.wo = w(h, h), w(h, h), w(h, h), w(h, h)
        self.w_gate_up = w(h, 2 * i)  # [W_gate | W_up]
        self.w_down = w(i, h)
        self.norm1 = (1 + 0.1 * rng.standard_normal(h)).astype(np.float32)
        self.norm2 = (1 + 0.1 * rng.standard_normal(h)).astype(np.float32)

    def phase_inputs(self, phase, batch, rng):
        """x (batch, S, hidden) and, for decode, a cache of `context` past keys
        and values per sequence (batch, heads, context, head_dim)."""
        s = self.shape
        tokens = s.seq if phase == "prefill" else 1
        x = rng.standard_normal((batch, tokens, s.hidden)).astype(np.float32)
        past = 0 if phase == "prefill" else s.context
        cache = [rng.standard_normal((batch, s.heads, past, s.head_dim)).astype(np.float32) for _ in range(2)]
        return {"x": x, "k_past": cache[0], "v_past": cache[1], "pos0": past}


def rope(x, pos0, xp):
    """x (batch, tokens, heads, D) rotated at positions pos0 + t (rotate-half)."""
    d = x.shape[-1]
    half = d // 2
    inv = THETA ** (-2.0 * xp.arange(half, dtype=xp.float64) / d)
    ang = (pos0 + xp.arange(x.shape[1], dtype=xp.float64))[:, None] * inv[None, :]
    cos, sin = xp.cos(ang)[None, :, None, :], xp.sin(ang)[None, :, None, :]
    a, b = x[..., :half], x[..., half:]
    return xp.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def block(shape, w, inp, xp, dtype):
    """The block in array module xp (numpy) at `dtype`."""
    c = lambda a: xp.asarray(a, dtype=dtype)  # noqa: E731
    x = c(inp["x"])
    bsz, t, h = x.shape
    nh, d = shape.heads, shape.head_dim

    def rms(v, g):
        return v / xp.sqrt(xp.mean(v * v, axis=-1, keepdims=True) + EPS) * c(g)

    xn = rms(x, w.norm1)
    q = rope((xn @ c(w.wq)).reshape(bsz, t, nh, d), inp["pos0"], xp).astype(dtype)
    k = rope((xn @ c(w.wk)).reshape(bsz, t, nh, d), inp["pos0"], xp).astype(dtype)
    v = (xn @ c(w.wv)).reshape(bsz, t, nh, d)
    keys = xp.concatenate([c(inp["k_past"]), k.transpose(0, 2, 1, 3)], axis=2)
    vals = xp.concatenate([c(inp["v_past"]), v.transpose(0, 2, 1, 3)], axis=2)
    scores = (q.transpose(0, 2, 1, 3) @ keys.transpose(0, 1, 3, 2)) / np.sqrt(d)
    sk = keys.shape[2]
    visible = np.arange(sk)[None, :] <= np.arange(t)[:, None] + (sk - t)
    scores = xp.where(visible[None, None], scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = xp.exp(scores)
    p = p / p.sum(axis=-1, keepdims=True)
    o = (p @ vals).transpose(0, 2, 1, 3).reshape(bsz, t, h)
    hid = x + o @ c(w.wo)
    gu = rms(hid, w.norm2) @ c(w.w_gate_up)
    gate, up = gu[..., : shape.mlp], gu[..., shape.mlp:]
    act = gate / (1 + xp.exp(-gate)) * up
    return hid + act @ c(w.w_down)


def reference_block(shape, w, inp, phase):
    return block(shape, w, inp, np, np.float64)


def numpy_block(shape, w, inp, phase):
    return block(shape, w, inp, np, np.float32)


def torch_block(shape, w, inp, phase):
    """The block in PyTorch eager, f32, on CUDA when available, else the CPU."""
    import torch
    import torch.nn.functional as F

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    c = lambda a: torch.as_tensor(np.ascontiguousarray(a), device=dev)  # noqa: E731
    x = c(inp["x"])
    bsz, t, h = x.shape
    nh, d = shape.heads, shape.head_dim
    half = d // 2
    inv = THETA ** (-2.0 * torch.arange(half, dtype=torch.float32, device=dev) / d)
    ang = (inp["pos0"] + torch.arange(t, dtype=torch.float32, device=dev))[:, None] * inv[None, :]
    cos, sin = torch.cos(ang)[None, :, None, :], torch.sin(ang)[None, :, None, :]

    def rot(v):
        a, b = v[..., :half], v[..., half:]
        return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)

    def rms(v, g):
        return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + EPS) * c(g)

    with torch.no_grad():
        xn = rms(x, w.norm1)
        q = rot((xn @ c(w.wq)).view(bsz, t, nh, d)).transpose(1, 2)
        k = rot((xn @ c(w.wk)).view(bsz, t, nh, d)).transpose(1, 2)
        v = (xn @ c(w.wv)).view(bsz, t, nh, d).transpose(1, 2)
        keys = torch.cat([c(inp["k_past"]), k], dim=2)
        vals = torch.cat([c(inp["v_past"]), v], dim=2)
        sk = keys.shape[2]
        mask = torch.arange(sk, device=dev)[None, :] <= torch.arange(t, device=dev)[:, None] + (sk - t)
        o = F.scaled_dot_product_attention(q, keys, vals, attn_mask=mask).transpose(1, 2).reshape(bsz, t, h)
        hid = x + o @ c(w.wo)
        gu = rms(hid, w.norm2) @ c(w.w_gate_up)
        out = hid + (F.silu(gu[..., : shape.mlp]) * gu[..., shape.mlp:]) @ c(w.w_down)
        if dev == "cuda":
            torch.cuda.synchronize()
        return out.cpu().numpy()
