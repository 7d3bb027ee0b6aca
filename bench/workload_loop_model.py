"""The model bench/workload_loop.py profiles: decoder-like blocks and a classifier head, written
once over a set of operators so that the same weights run eagerly (PyTorch's operators) or with
the operators kforge covers replaced by torch.ops.kforge.*.

Per block, on `tokens x hidden` activations of one sequence: RMSNorm -> Q, K, V projections ->
causal attention over `heads` heads -> output projection + residual -> RMSNorm -> fused gate|up
projection -> SiLU(gate) * up -> down projection + residual. The head: RMSNorm -> projection to
`classes` logits -> softmax. Projections are `x @ W` with W stored `K x N` (what kforge's gemm op
takes, layout NN). SiLU * up stays eager in both runs: torch.ops.kforge has no swiglu.
"""
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F

EPS = 1e-6


@dataclass(frozen=True)
class Shape:
    hidden: int
    heads: int
    mlp: int
    tokens: int
    layers: int
    classes: int

    def as_dict(self):
        return asdict(self)


class EagerOps:
    """PyTorch's own operators (what the before trace records)."""
    name = "eager"

    @staticmethod
    def matmul(x, w):
        return torch.matmul(x, w)

    @staticmethod
    def rms_norm(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, EPS)

    @staticmethod
    def softmax(x):
        return torch.softmax(x, dim=-1)

    @staticmethod
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class KforgeOps:
    """kforge's torch ops, selecting through the lookup kforge.torch_ops.use() was given."""
    name = "kforge"

    @staticmethod
    def matmul(x, w):
        return torch.ops.kforge.gemm(x, w)

    @staticmethod
    def rms_norm(x, w):
        return torch.ops.kforge.rms_norm(x, w, EPS)

    @staticmethod
    def softmax(x):
        return torch.ops.kforge.softmax(x)

    @staticmethod
    def attention(q, k, v):
        return torch.ops.kforge.attention(q, k, v, True)


def random_weights(shape, seed):
    """f32 weights scaled by 1/sqrt(fan-in); norms' weights near 1."""
    g = torch.Generator().manual_seed(seed)
    dense = lambda k, n: torch.randn(k, n, generator=g) / k ** 0.5  # noqa: E731
    norm = lambda: 1 + 0.1 * torch.randn(shape.hidden, generator=g)  # noqa: E731
    h, m = shape.hidden, shape.mlp
    blocks = [{"norm1": norm(), "wq": dense(h, h), "wk": dense(h, h), "wv": dense(h, h), "wo": dense(h, h),
               "norm2": norm(), "w_gate_up": dense(h, 2 * m), "w_down": dense(m, h)}
              for _ in range(shape.layers)]
    return {"blocks": blocks, "norm_out": norm(), "w_head": dense(h, shape.classes)}


def random_input(shape, seed):
    return torch.randn(shape.tokens, shape.hidden, generator=torch.Generator().manual_seed(seed + 1000))


def head_major(x, heads):
    """tokens x hidden -> 1 x heads x tokens x head_dim, contiguous."""
    tokens, hidden = x.shape
    return x.view(tokens, heads, hidden // heads).transpose(0, 1).unsqueeze(0).contiguous()


def token_major(o):
    """1 x heads x tokens x head_dim -> tokens x hidden."""
    _, heads, tokens, d = o.shape
    return o.squeeze(0).transpose(0, 1).reshape(tokens, heads * d)


def block(ops, x, w, heads):
    h = ops.rms_norm(x, w["norm1"])
    q, k, v = (head_major(ops.matmul(h, w[n]), heads) for n in ("wq", "wk", "wv"))
    x = x + ops.matmul(token_major(ops.attention(q, k, v)), w["wo"])
    h = ops.rms_norm(x, w["norm2"])
    gate, up = ops.matmul(h, w["w_gate_up"]).chunk(2, dim=-1)
    return x + ops.matmul(F.silu(gate) * up, w["w_down"])


def forward(ops, shape, weights, x):
    """(logits, probabilities) of the model on x (tokens x hidden)."""
    for w in weights["blocks"]:
        x = block(ops, x, w, shape.heads)
    logits = ops.matmul(ops.rms_norm(x, weights["norm_out"]), weights["w_head"])
    return logits, ops.softmax(logits)
