"""kforge kernels as PyTorch custom ops: torch.ops.kforge.gemm, .rms_norm,
.softmax and .attention, each with a fake (meta) implementation so that
torch.compile can trace graphs that call them (docs/python.md).

Each op selects once per shape (the lookup caches selections and compiled
kernels) and launches on the lookup's device: ``use(lookup)`` chooses it;
by default the first op opens ``Lookup(open_device("auto"), db=$KFORGE_DB
or "kforge.db")``. Outputs are float32, as every kforge operator writes.

Contiguity follows the package's one rule (docs/python.md, "Contiguity"): no
tensor is copied silently and no output is ever copied. The kernel call
refuses a tensor that is not C-contiguous; these ops allocate their outputs
(contiguous) and make the contiguous copy of an input themselves, saying so
once per op and input with a ContiguousCopyWarning.
"""
import atexit
import os
import warnings

import torch

from kforge import _kforge
from kforge._kforge import BadInputError

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_SOFTMAX_MAX_SPLIT = 64  # kSoftmaxMaxSplit (generator/softmax_operator.hpp)
_state = {"lookup": None}
_warned = set()  # (op, input) pairs already reported by a ContiguousCopyWarning


class ContiguousCopyWarning(UserWarning):
    """An input of a torch.ops.kforge op was not contiguous: it was copied for
    the launch, as it will be on every call with such strides."""


@atexit.register
def _release_lookup():
    """Drops the lookup before the interpreter tears the extension down.

    torch.library keeps the ops' functions, and through them this module's
    globals, alive past interpreter shutdown, so a lookup held in _state would
    never be freed: nanobind would report it (and its device) as leaked.
    atexit hooks run first, while the extension can still free it."""
    _state["lookup"] = None


def use(lookup):
    """Makes the torch ops select and launch through ``lookup``."""
    _state["lookup"] = lookup


def current_lookup():
    """The lookup the ops launch through, opened on first use."""
    if _state["lookup"] is None:
        device = _kforge.open_device("auto")
        _state["lookup"] = _kforge.Lookup(device, db=os.environ.get("KFORGE_DB", "kforge.db"))
    return _state["lookup"]


def _dtype_of(op, **tensors):
    dtypes = {t.dtype for t in tensors.values()}
    names = ", ".join(tensors)
    if len(dtypes) != 1:
        raise BadInputError(f"kforge::{op}: {names} must share one dtype, got {sorted(map(str, dtypes))}")
    dtype = dtypes.pop()
    if dtype not in _DTYPES:
        raise BadInputError(f"kforge::{op}: dtype {dtype} (kforge takes float32, float16, bfloat16)")
    return _DTYPES[dtype]


def _contiguous(op, **tensors):
    """The inputs, each contiguous: one that is not is copied, with a
    ContiguousCopyWarning the first time for this op and input."""
    out = []
    for name, t in tensors.items():
        if not t.is_contiguous():
            if (op, name) not in _warned:
                _warned.add((op, name))
                warnings.warn(f"kforge::{op}: input '{name}' of shape {tuple(t.shape)} has strides {t.stride()}, "
                              "not contiguous; it is copied to a contiguous tensor for the launch, on every call "
                              "(pass a contiguous tensor to avoid the copy; this warning is shown once per op and "
                              "input)", ContiguousCopyWarning, stacklevel=3)
            t = t.contiguous()
        out.append(t)
    return out


def _launch(op, dims, dtype, attrs=None, **args):
    lookup = current_lookup()
    selection = lookup.select(op, dims, dtype, attrs=attrs or {})
    lookup.kernel(selection)(**args, **_stream_of(args.values()))


def _stream_of(tensors):
    """stream= for a launch on GPU tensors: PyTorch's current stream on their
    device, so the kernel runs in order with the work queued around it."""
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            return {"stream": torch.cuda.current_stream(t.device)}
    return {}


@torch.library.custom_op("kforge::gemm", mutates_args=())
def gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for a (M, K) and b (K, N), or batched (batch, M, K) @ (batch, K, N)."""
    if a.dim() != b.dim() or a.dim() not in (2, 3) or a.shape[-1] != b.shape[-2] or a.shape[:-2] != b.shape[:-2]:
        raise BadInputError(f"kforge::gemm: shapes {tuple(a.shape)} and {tuple(b.shape)} do not multiply")
    dtype = _dtype_of("gemm", a=a, b=b)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = a.shape[0] if a.dim() == 3 else 1
    a, b = _contiguous("gemm", a=a, b=b)
    c = torch.empty(a.shape[:-2] + (m, n), dtype=torch.float32, device=a.device)
    _launch("gemm", {"M": m, "N": n, "K": k, "batch": batch}, dtype, A=a, B=b, C=c, alpha=1.0, beta=0.0)
    return c


@gemm.register_fake
def _(a, b):
    return a.new_empty(a.shape[:-2] + (a.shape[-2], b.shape[-1]), dtype=torch.float32)


@torch.library.custom_op("kforge::rms_norm", mutates_args=())
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """x / sqrt(mean(x^2, last axis) + eps) * weight."""
    if weight.dim() != 1 or x.shape[-1] != weight.shape[0]:
        raise BadInputError(f"kforge::rms_norm: weight of shape {tuple(weight.shape)} for x of {tuple(x.shape)}")
    dtype = _dtype_of("rms_norm", x=x, weight=weight)
    cols = x.shape[-1]
    x, weight = _contiguous("rms_norm", x=x, weight=weight)
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    _launch("rmsnorm", {"rows": x.numel() // cols, "cols": cols}, dtype, X=x, W=weight, Y=y, eps=eps)
    return y


@rms_norm.register_fake
def _(x, weight, eps):
    return x.new_empty(x.shape, dtype=torch.float32)


@torch.library.custom_op("kforge::softmax", mutates_args=())
def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis."""
    dtype = _dtype_of("softmax", x=x)
    cols = x.shape[-1]
    rows = x.numel() // cols
    x, = _contiguous("softmax", x=x)
    y = torch.empty(x.shape, dtype=torch.float32, device=x.device)
    # Scratch of the split-row templates; counters must be zero (float zeros are int zeros).
    partials = torch.empty(rows * 2 * _SOFTMAX_MAX_SPLIT, dtype=torch.float32, device=x.device)
    counters = torch.zeros(rows, dtype=torch.float32, device=x.device)
    _launch("softmax", {"rows": rows, "cols": cols}, dtype, X=x, Y=y, partials=partials,
            counters=counters)
    return y


@softmax.register_fake
def _(x):
    return x.new_empty(x.shape, dtype=torch.float32)


@torch.library.custom_op("kforge::attention", mutates_args=())
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(D) + mask) v for q (B, H, S, D) and k, v (B, H, SK, D)."""
    if q.dim() != 4 or k.shape != v.shape or k.dim() != 4 or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise BadInputError(f"kforge::attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
                            "must be (B, H, S, D), (B, H, SK, D), (B, H, SK, D)")
    dtype = _dtype_of("attention", q=q, k=k, v=v)
    b, h, s, d = q.shape
    q, k, v = _contiguous("attention", q=q, k=k, v=v)
    o = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    _launch("attention", {"B": b, "H": h, "S": s, "SK": k.shape[2], "D": d}, dtype,
            {"mask": "causal" if causal else "none"}, Q=q, K=k, V=v, O=o,
            scale=float(d) ** -0.5)
    return o


@attention.register_fake
def _(q, k, v, causal=False):
    return q.new_empty(q.shape, dtype=torch.float32)
