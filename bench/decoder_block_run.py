"""The decoder block launched through one kforge Lookup: each step's
selection and kernel are made once; a run launches them in order, with the
activations in host NumPy arrays between them (docs/python.md: the package
copies each tensor to the device and back per launch)."""
import numpy as np

from decoder_block_model import EPS, THETA


class KforgeBlock:
    def __init__(self, lookup, shape, weights, steps):
        self.shape, self.w, self.steps = shape, weights, {s.name: s for s in steps}
        self.sel = {s.name: lookup.select(s.op, s.dims, attrs=s.attrs) for s in steps}
        self.kernel = {name: lookup.kernel(sel) for name, sel in self.sel.items()}
        self.last_times = {}
        self.last_args = {}

    def selections(self):
        return {name: {"rule": s.rule, "template": s.template_name, "config": str(s.config)}
                for name, s in self.sel.items()}

    def launch(self, name, **args):
        """One launch of a step; its device time adds to the step's."""
        ms = self.kernel[name](**args)
        self.last_times[name] = self.last_times.get(name, 0.0) + ms
        self.last_args.setdefault(name, []).append(args)

    def isolated_ms(self, name, inputs, reps):
        """The step's launches of the last run, repeated alone: median device ms."""
        times = []
        for _ in range(reps):
            times.append(sum(self.kernel[name](**a) for a in self.last_args[name]))
        return float(np.median(times))

    def gemm(self, name, a, b, residual=None):
        c = np.empty((a.shape[0], b.shape[1]), np.float32) if residual is None else residual.copy()
        self.launch(name, A=a, B=b, C=c, alpha=1.0, beta=0.0 if residual is None else 1.0)
        return c

    def rmsnorm(self, name, x, weight):
        y = np.empty_like(x)
        self.launch(name, eps=EPS, X=x, W=weight, Y=y)
        return y

    def rope(self, name, x, pos0):
        """x (batch, tokens, heads, D): one launch per sequence in prefill, one in all at decode."""
        y = np.empty_like(x)
        if self.steps[name].launches == 1:
            self.launch(name, pos0=pos0, theta=THETA, X=x, Y=y)
        else:
            for b in range(x.shape[0]):
                self.launch(name, pos0=pos0, theta=THETA, X=x[b], Y=y[b])
        return y

    def run(self, inp):
        """The block's output (batch, tokens, hidden) for inputs of Weights.phase_inputs."""
        self.last_times, self.last_args = {}, {}
        s, w = self.shape, self.w
        x = inp["x"]
        bsz, t, h = x.shape
        rows = x.reshape(bsz * t, h)
        xn = self.rmsnorm("rmsnorm_1", rows, w.norm1)
        heads = lambda m: m.reshape(bsz, t, s.heads, s.head_dim)  # noqa: E731
        q = self.rope("rope_q", heads(self.gemm("q_proj", xn, w.wq)), inp["pos0"])
        k = self.rope("rope_k", heads(self.gemm("k_proj", xn, w.wk)), inp["pos0"])
        v = heads(self.gemm("v_proj", xn, w.wv))
        # Glue: head-major Q, and the KV cache with this step's keys appended.
        qh = np.ascontiguousarray(q.transpose(0, 2, 1, 3))
        keys = np.concatenate([inp["k_past"], k.transpose(0, 2, 1, 3)], axis=2)
        vals = np.concatenate([inp["v_past"], v.transpose(0, 2, 1, 3)], axis=2)
        o = np.empty_like(qh)
        self.launch("attention", scale=1.0 / np.sqrt(s.head_dim), Q=qh, K=keys, V=vals, O=o)
        o_rows = np.ascontiguousarray(o.transpose(0, 2, 1, 3)).reshape(bsz * t, h)
        hid = self.gemm("o_proj_residual", o_rows, w.wo, residual=rows)
        gu = self.gemm("gate_up_proj", self.rmsnorm("rmsnorm_2", hid, w.norm2), w.w_gate_up)
        act = np.empty((bsz * t, s.mlp), np.float32)
        self.launch("swiglu", X=gu, Y=act)
        out = self.gemm("down_proj_residual", act, w.w_down, residual=hid)
        return out.reshape(bsz, t, h)
