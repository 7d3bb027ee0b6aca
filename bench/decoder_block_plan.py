"""The decoder block's operator launches for a phase, as problems kforge
selects for (docs/operators.md, "The decoder block's operators")."""
from dataclasses import dataclass, field


@dataclass
class Step:
    name: str  # the launch's role in the block, e.g. "q_proj"
    op: str
    dims: dict
    attrs: dict = field(default_factory=dict)
    launches: int = 1  # rope in prefill: once per sequence

    def label(self):
        dims = ",".join(f"{k}={v}" for k, v in self.dims.items())
        attrs = "".join(f" {k}={v}" for k, v in self.attrs.items())
        return f"{self.name}: {self.op} {dims}{attrs}"

    def problem(self):
        return (self.op, tuple(self.dims.items()), tuple(self.attrs.items()))


def block_steps(shape, phase, batch):
    """The launches of one block: prefill runs `seq` tokens per sequence from
    position 0; decode one token per sequence after `context` cached ones."""
    h, nh, d, i = shape.hidden, shape.heads, shape.head_dim, shape.mlp
    t = shape.seq if phase == "prefill" else 1
    past = 0 if phase == "prefill" else shape.context
    rows = batch * t
    # Decode: every sequence's token sits at the same position, so one launch
    # rotates all of them as one token of batch * heads heads.
    rope = ({"tokens": t, "heads": nh, "head_dim": d}, batch) if phase == "prefill" else \
        ({"tokens": 1, "heads": batch * nh, "head_dim": d}, 1)
    proj = {"M": rows, "N": h, "K": h}
    return [
        Step("rmsnorm_1", "rmsnorm", {"rows": rows, "cols": h}),
        Step("q_proj", "gemm", proj), Step("k_proj", "gemm", proj), Step("v_proj", "gemm", proj),
        Step("rope_q", "rope", rope[0], launches=rope[1]), Step("rope_k", "rope", rope[0], launches=rope[1]),
        Step("attention", "attention", {"B": batch, "H": nh, "S": t, "SK": past + t, "D": d}, {"mask": "causal"}),
        Step("o_proj_residual", "gemm", proj),
        Step("rmsnorm_2", "rmsnorm", {"rows": rows, "cols": h}),
        Step("gate_up_proj", "gemm", {"M": rows, "N": 2 * i, "K": h}),
        Step("swiglu", "swiglu", {"rows": rows, "cols": i}),
        Step("down_proj_residual", "gemm", {"M": rows, "N": h, "K": i}),
    ]


def distinct_problems(steps):
    """One step per distinct problem, in first-use order."""
    seen, out = set(), []
    for s in steps:
        if s.problem() not in seen:
            seen.add(s.problem())
            out.append(s)
    return out
