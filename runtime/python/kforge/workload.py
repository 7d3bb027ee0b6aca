"""Read a PyTorch profiler trace: where the time goes, what kforge covers, the
most the step can gain, and a sweep plan (docs/workload.md, "Reading a trace").

    python -m kforge.workload TRACE.json [--db kforge.db] [--plan out.json] [--json]
                              [--assumed-speedup X]
    python -m kforge.workload compare BEFORE.json AFTER.json [--db kforge.db] [--json]

The second form is the receipt: two traces of one workload (before: without
kforge; after: with its selections), per operator and shape the time per step
before and after, the measured and the expected speedup, and end to end
(docs/workload.md, "The receipt").

Rotary embeddings and SwiGLU are composite in PyTorch; match_rope and
match_swiglu state the operator sequences recognised as kforge's rope and
swiglu.

The trace is the Chrome-trace JSON that torch.profiler exports
(`prof.export_chrome_trace(path)`), recorded with `record_shapes=True`, on
the CPU or with CUDA kernels. This module imports the `_kforge` extension
only to read a database (--db), so the rest works without it.

Exit status: 0 on success, 2 for bad input (one line on stderr naming the
file and what is missing).
"""
import argparse
import json
import math
import sys
from pathlib import Path

US_PER_MS = 1000.0
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATEGORIES = {"cuda_runtime", "cuda_driver", "hip_runtime"}
DTYPES = {"float": "f32", "c10::Half": "f16", "c10::BFloat16": "bf16"}
GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul"}
NORM_OPS = {"aten::rms_norm": "rmsnorm", "aten::layer_norm": "layernorm"}
SOFTMAX_OPS = {"aten::softmax", "aten::_softmax"}
ATTENTION_OPS = {"aten::scaled_dot_product_attention"}
COVERED_OPS = GEMM_OPS | set(NORM_OPS) | SOFTMAX_OPS | ATTENTION_OPS
DEFAULT_ASSUMED_SPEEDUP = 1.5


class WorkloadError(Exception):
    """Bad input: the message is one line naming the file and what is missing."""


# ---------------------------------------------------------------------------
# Reading the trace


def load_trace(path):
    """The trace's JSON object, or WorkloadError naming what is wrong with it."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise WorkloadError(f"{path}: cannot read: {e.strerror}") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise WorkloadError(f"{path}: not JSON (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        ends_early = e.pos >= len(raw.rstrip()) or e.msg.startswith("Unterminated string")
        truncated = " (truncated?)" if ends_early and raw.lstrip()[:1] in (b"{", b"[") else ""
        raise WorkloadError(f"{path}: not JSON{truncated}: {e.msg} (line {e.lineno}, column {e.colno})") from None
    return check_trace(doc, path)


def check_trace(doc, path):
    """doc if it is a torch.profiler trace recorded with shapes, else WorkloadError."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise WorkloadError(f"{path}: no 'traceEvents' array: not a Chrome trace (export it with "
                            "torch.profiler's export_chrome_trace)")
    ops = [e for e in doc["traceEvents"] if is_cpu_op(e)]
    if not ops:
        raise WorkloadError(f"{path}: traceEvents has no 'cpu_op' events: not a torch.profiler trace")
    if not any("Input Dims" in (e.get("args") or {}) for e in ops):
        raise WorkloadError(f"{path}: cpu_op events have no args 'Input Dims': record with "
                            "torch.profiler.profile(record_shapes=True)")
    return doc


def is_cpu_op(e):
    return (isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "cpu_op"
            and not str(e.get("name", "")).startswith("ProfilerStep#"))


def is_step(e):
    """A ProfilerStep#N span on the host (its copy on the device timeline, gpu_user_annotation, is not)."""
    return (isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"
            and str(e.get("name", "")).startswith("ProfilerStep#"))


class Op:
    """One cpu_op event, with its children (nested calls on the same thread) and
    the device events it launched (its own, not its children's)."""

    def __init__(self, event):
        self.name = event["name"]
        self.ts = float(event["ts"])
        self.dur = float(event.get("dur", 0.0))
        self.thread = (event.get("pid"), event.get("tid"))
        self.args = event.get("args") or {}
        self.children = []
        self.kernels = []

    @property
    def end(self):
        return self.ts + self.dur

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    def device_us(self):
        return sum(k["dur"] for n in self.walk() for k in n.kernels)


def build_trees(events):
    """The root Ops of each thread, children nested by time containment."""
    by_thread = {}
    for e in events:
        by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(Op(e))
    roots = []
    for ops in by_thread.values():
        ops.sort(key=lambda o: (o.ts, -o.dur))
        stack = []
        for op in ops:
            while stack and op.ts >= stack[-1].end:
                stack.pop()
            (stack[-1].children if stack else roots).append(op)
            stack.append(op)
    roots.sort(key=lambda o: o.ts)
    return roots


def innermost(roots_by_thread, thread, ts):
    """The deepest Op of thread whose span holds ts, or None."""
    found = None
    level = roots_by_thread.get(thread, [])
    while True:
        hit = next((o for o in level if o.ts <= ts < o.end), None)
        if hit is None:
            return found
        found, level = hit, hit.children


def device_events(events):
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES]


def launch_events(events):
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in LAUNCH_CATEGORIES]


def correlation_of_flows(events):
    """Device events' correlation ids from 'ac2g' flow events, where the kernels' args lack them:
    {(pid, tid, ts) of the flow's end: id}."""
    return {(e.get("pid"), e.get("tid"), float(e["ts"])): e.get("id")
            for e in events if isinstance(e, dict) and e.get("cat") == "ac2g" and e.get("ph") == "f" and "ts" in e}


def link_kernels(roots, events):
    """Attach each device event to the Op whose launch call (same correlation id) it came from.
    Returns (kernels, launches by correlation id, kernels with no operator)."""
    by_thread = {}
    for r in roots:
        by_thread.setdefault(r.thread, []).append(r)
    launches = {(e.get("args") or {}).get("correlation"): e for e in launch_events(events)}
    flows = correlation_of_flows(events)
    kernels, orphans = [], []
    for e in device_events(events):
        k = {"name": e.get("name", ""), "ts": float(e["ts"]), "dur": float(e.get("dur", 0.0)),
             "correlation": (e.get("args") or {}).get("correlation",
                                                        flows.get((e.get("pid"), e.get("tid"), float(e["ts"]))))}
        kernels.append(k)
        launch = launches.get(k["correlation"])
        op = innermost(by_thread, (launch.get("pid"), launch.get("tid")), float(launch["ts"])) if launch else None
        (op.kernels if op else orphans).append(k)
    return kernels, launches, orphans


# ---------------------------------------------------------------------------
# The step, the units of work and their problems


def step_window(events, roots, kernels):
    """(start, end, steps) in us: the ProfilerStep#N spans when present, else the whole trace."""
    steps = sorted((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0))) for e in events if is_step(e))
    if steps:
        return steps[0][0], steps[-1][1], steps
    starts = [r.ts for r in roots] + [k["ts"] for k in kernels]
    ends = [r.end for r in roots] + [k["ts"] + k["dur"] for k in kernels]
    return min(starts), max(ends), [(min(starts), max(ends))]


def in_steps(op, steps):
    return any(s <= op.ts < e for s, e in steps)


def contains_covered(op):
    return any(n.name in COVERED_OPS for n in op.walk()) or \
        any(isinstance(item, Pattern) for n in op.walk() for item in grouped(n.children))


def is_covered_unit(op):
    return isinstance(op, Pattern) or op.name in COVERED_OPS


def units(op):
    """(op, excluded ops) pairs: the outermost covered operators (and recognised patterns) under op,
    and op itself for what remains when it is not covered (its time less that of the covered ones)."""
    if is_covered_unit(op) or not contains_covered(op):
        return [(op, [])]
    covered = [u for c in grouped(op.children) for u, _ in units(c) if is_covered_unit(u)]
    return [(op, covered)] + [(u, []) for u in covered]


# ---------------------------------------------------------------------------
# Patterns: composite PyTorch code that is one kforge operator


class Pattern:
    """Sibling operators on one thread recognised as one kforge operator (rope, swiglu): one unit of
    work, its time the sum of its members' (members need not be adjacent: a SwiGLU's up projection
    between its silu and mul stays a gemm of its own)."""

    def __init__(self, name, members, inputs, problem=None, not_covered=None):
        self.name = name
        self.members = members
        self.inputs = inputs
        self.problem = problem
        self.not_covered = not_covered
        self.ts = members[0].ts
        self.dur = sum(m.dur for m in members)
        self.thread = members[0].thread
        self.children = []

    def walk(self):
        for m in self.members:
            yield from m.walk()

    def device_us(self):
        return sum(m.device_us() for m in self.members)


ROPE_NAME = "rope (rotate_half)"
SWIGLU_NAME = "swiglu (silu * mul)"
SILU_OPS = {"aten::silu", "aten::silu_"}


def grouped(ops):
    """ops (siblings, in time order; several threads allowed) with the rope and SwiGLU patterns
    among them replaced by Patterns, in time order."""
    by_thread = {}
    for o in ops:
        by_thread.setdefault(o.thread, []).append(o)
    out = []
    for seq in by_thread.values():
        out += group_thread(sorted(seq, key=lambda o: o.ts))
    return sorted(out, key=lambda o: o.ts)


def group_thread(seq):
    taken, patterns = set(), []
    for i, o in enumerate(seq):
        if i in taken:
            continue
        found = match_rope(seq, i) if o.name == "aten::neg" else \
            match_swiglu(seq, i) if o.name in SILU_OPS else None
        if found and not taken & set(found[0]):
            taken |= set(found[0])
            patterns.append(found[1])
    return patterns + [o for i, o in enumerate(seq) if i not in taken]


def dims_at(op, i):
    shapes = shape_list(op)
    return shapes[i] if i < len(shapes) and isinstance(shapes[i], list) else None


def last_dim(op, i, rank):
    text = concrete(op, i)
    return text.lstrip("-").isdigit() and int(text) in (-1, rank - 1)


def match_rope(seq, n):
    """The rotate-half rotary embedding around the aten::neg at seq[n] (Hugging Face Llama's
    apply_rotary_pos_emb, x * cos + rotate_half(x) * sin): seven adjacent operators on one thread,
    aten::slice, aten::slice and aten::mul(x, cos) in either order [slice, slice, mul] or
    [mul, slice, slice], then aten::neg, aten::cat, aten::mul(rotated, sin), aten::add(., .); the
    slices halve x [..., D] along its last axis (0..D/2 and D/2..end), neg and cat take the halves
    (cat along the last axis), cos and sin have one shape. Returns (indices, Pattern) or None."""
    if n < 3 or n + 3 >= len(seq):
        return None
    before, (neg, cat, mul_sin, add) = seq[n - 3:n], seq[n:n + 4]
    names = [o.name for o in before]
    if names == ["aten::slice", "aten::slice", "aten::mul"]:
        slices, mul_cos = before[:2], before[2]
    elif names == ["aten::mul", "aten::slice", "aten::slice"]:
        slices, mul_cos = before[1:], before[0]
    else:
        return None
    if (cat.name, mul_sin.name, add.name) != ("aten::cat", "aten::mul", "aten::add"):
        return None
    x, cos, sin = dims_at(mul_cos, 0), dims_at(mul_cos, 1), dims_at(mul_sin, 1)
    if not x or len(x) < 2 or x[-1] % 2 or cos is None or cos != sin:
        return None
    half = x[:-1] + [x[-1] // 2]
    starts = sorted(concrete(s, 2) for s in slices)
    if any(dims_at(s, 0) != x or not last_dim(s, 1, len(x)) for s in slices) or \
            starts != sorted(["0", str(x[-1] // 2)]):
        return None
    cat_inputs = dims_at(cat, 0)
    if dims_at(neg, 0) != half or cat_inputs != [half, half] or not last_dim(cat, 1, len(x)):
        return None
    if dims_at(mul_sin, 0) != x or dims_at(add, 0) != x or dims_at(add, 1) != x:
        return None
    members = sorted(slices + [mul_cos, neg, cat, mul_sin, add], key=lambda o: o.ts)
    inputs = f"x {shape_text_of(mul_cos, 0)}, cos {shape_text_of(mul_cos, 1)}"
    indices = [seq.index(m) for m in members]
    try:
        problem = rope_problem(mul_cos, x, cos)
        return indices, Pattern(ROPE_NAME, members, inputs, problem=problem)
    except Uncovered as e:
        return indices, Pattern(ROPE_NAME, members, inputs, not_covered=str(e))


def rope_problem(op, x, cos):
    """rope's tokens, heads, head_dim from x [..., D] and cos (broadcast against x): a dim where cos
    has x's size is the sequence (tokens), one where cos has size 1 a head (or a batch sharing the
    positions); more than one sequence dim (a batch with positions of its own) is not covered."""
    d = x[-1]
    if not cos or cos[-1] != d:
        raise Uncovered(f"rotary with x {x} and cos {cos}: cos's last dim is not x's head_dim")
    aligned = [1] * (len(x) - len(cos)) + list(cos)
    if len(aligned) != len(x):
        raise Uncovered(f"rotary with x {x} and cos {cos}: cos has more dims than x")
    tokens, heads = [], []
    for size, c in zip(x[:-1], aligned[:-1]):
        if size == 1:
            continue
        if c == size:
            tokens.append(size)
        elif c == 1:
            heads.append(size)
        else:
            raise Uncovered(f"rotary with x {x} and cos {cos}: cos does not broadcast against x")
    if len(tokens) > 1:
        raise Uncovered(f"rotary with x {x} and cos {cos}: positions vary along {len(tokens)} dims (a batch "
                        "with positions of its own); kforge's rope numbers the tokens of one sequence")
    dims = {"tokens": prod(tokens), "heads": prod(heads), "head_dim": d}
    return make_problem("rope", dims, kforge_dtype(op, 0), "NN", "none", {"pairing": "half"})


def output_dims(op):
    """The output shape of a gemm operator, from its inputs (None when not a gemm)."""
    shapes = shape_list(op)
    if op.name == "aten::linear" and len(shapes) > 1 and shapes[0] and len(shapes[1]) == 2:
        return shapes[0][:-1] + [shapes[1][0]]
    if op.name in ("aten::mm", "aten::matmul", "aten::bmm") and len(shapes) > 1 and len(shapes[1]) >= 2:
        return (shapes[0] or [])[:-1] + [shapes[1][-1]]
    return None


def match_swiglu(seq, n):
    """SwiGLU around the aten::silu (or silu_) at seq[n] of g [..., C]: the next operator on the
    thread is aten::mul of two [..., C] tensors (silu(gate) * up after a chunk of a fused gate|up
    projection), or the next two are a gemm whose output is [..., C] (the up projection, which
    stays a gemm row of its own) and that mul. Returns (indices, Pattern) or None."""
    g = dims_at(seq[n], 0)
    if not g:
        return None
    for mul_at in (n + 1, n + 2):
        if mul_at >= len(seq) or seq[mul_at].name != "aten::mul":
            continue
        if mul_at == n + 2 and output_dims(seq[n + 1]) != g:
            continue
        mul = seq[mul_at]
        if dims_at(mul, 0) != g or dims_at(mul, 1) != g:
            return None
        inputs = shape_text_of(seq[n], 0)
        members = [seq[n], mul]
        try:
            dims = {"rows": prod(g[:-1]), "cols": g[-1]}
            pattern = Pattern(SWIGLU_NAME, members, inputs,
                              problem=make_problem("swiglu", dims, kforge_dtype(seq[n], 0), "NN", "none", {}))
        except Uncovered as e:
            pattern = Pattern(SWIGLU_NAME, members, inputs, not_covered=str(e))
        return [n, mul_at], pattern
    return None


def shape_text_of(op, i):
    types = type_list(op)
    return f"{types[i] if i < len(types) else '?'}{dims_at(op, i)}"


def shape_list(op):
    return op.args.get("Input Dims") or []


def type_list(op):
    return op.args.get("Input type") or []


def concrete(op, i):
    values = op.args.get("Concrete Inputs") or []
    return values[i] if i < len(values) else ""


def strides(op, i):
    values = op.args.get("Input Strides") or []
    return values[i] if i < len(values) else None


def kforge_dtype(op, i):
    types = type_list(op)
    torch_type = types[i] if i < len(types) else ""
    if torch_type not in DTYPES:
        raise Uncovered(f"dtype {torch_type or 'unknown'}: kforge takes f32, f16, bf16")
    return DTYPES[torch_type]


class Uncovered(Exception):
    """Why an operator (with these inputs) is not a kforge problem."""


def prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def transposed(op, i, shape):
    """Whether input i is stored transposed (column-major in its last two dims), from its strides."""
    s = strides(op, i)
    if not s or len(s) != len(shape) or len(shape) < 2:
        return False
    return s[-2] == 1 and s[-1] != 1 and shape[-2] != 1


def gemm_problem(op):
    shapes = shape_list(op)
    name = op.name
    epilogue = "none"
    if name == "aten::linear":
        x, w = shapes[0], shapes[1]
        if len(w) != 2 or not x:
            raise Uncovered(f"linear with input {x} and weight {w}: kforge's gemm needs a 2-D weight")
        m, k, n = prod(x[:-1]), x[-1], w[0]
        batch, layout = 1, "N" + "T"
        epilogue = "bias" if len(shapes) > 2 and shapes[2] == [n] else "none"
        return gemm_dims(m, n, k, batch), kforge_dtype(op, 0), layout, epilogue
    if name == "aten::addmm":
        bias, a, b = shapes[0], shapes[1], shapes[2]
        ia, ib = 1, 2
        epilogue = "bias" if len(bias) == 1 else "none"
    else:
        a, b = shapes[0], shapes[1]
        ia, ib = 0, 1
    if len(a) < 2 or len(b) < 2:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: a matrix-vector product, not a gemm")
    lead_a, lead_b = a[:-2], b[:-2]
    if lead_a and not lead_b:
        m, batch = prod(lead_a) * a[-2], 1
    elif lead_a and lead_b and lead_a != lead_b:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: broadcast batch dimensions")
    elif not lead_a and lead_b:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: a matrix times a batch (B batched, A not)")
    else:
        m, batch = a[-2], prod(lead_a)
    layout = ("T" if transposed(op, ia, a) and not (lead_a and not lead_b) else "N") + \
             ("T" if transposed(op, ib, b) else "N")
    return gemm_dims(m, b[-1], a[-1], batch), kforge_dtype(op, ia), layout, epilogue


def gemm_dims(m, n, k, batch):
    return {"M": m, "N": n, "K": k, "batch": batch}


def norm_problem(op):
    shapes = shape_list(op)
    x = shapes[0]
    weight = shapes[2] if len(shapes) > 2 else []
    cols = prod(weight) if weight else (x[-1] if x else 0)
    if not x or cols == 0 or prod(x) % cols:
        raise Uncovered(f"{op.name.split('::')[-1]} of {x} with weight {weight}: no rows x cols view")
    if weight and weight != x[len(x) - len(weight):]:
        raise Uncovered(f"normalized shape {weight} is not the trailing dims of {x}")
    if not weight:
        raise Uncovered("no weight: kforge's norms scale by a weight")
    if op.name == "aten::layer_norm" and (len(shapes) < 4 or not shapes[3]):
        raise Uncovered("no bias: kforge's layernorm adds one")
    return {"rows": prod(x) // cols, "cols": cols}, kforge_dtype(op, 0), "NN", "none"


def softmax_problem(op):
    x = shape_list(op)[0]
    dim_text = concrete(op, 1)
    dim = int(dim_text) if dim_text.lstrip("-").isdigit() else -1
    if not x:
        raise Uncovered("softmax of a scalar")
    if dim not in (-1, len(x) - 1):
        raise Uncovered(f"softmax over dim {dim} of {x}: kforge's softmax is over the last axis")
    return {"rows": prod(x) // x[-1], "cols": x[-1]}, kforge_dtype(op, 0), "NN", "none"


def attention_problem(op):
    shapes = shape_list(op)
    q, k, v = shapes[0], shapes[1], shapes[2]
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise Uncovered(f"attention on {q}, {k}, {v}: kforge takes B x H x S x D tensors")
    if q[1] != k[1] or k != v:
        raise Uncovered(f"attention with {q[1]} query heads over {k[1]} key heads: grouped-query attention")
    if len(shapes) > 3 and shapes[3]:
        raise Uncovered(f"attention with an attn_mask tensor {shapes[3]}: kforge takes no mask or causal")
    dropout = concrete(op, 4)
    if dropout not in ("", "0", "0.", "0.0"):
        raise Uncovered(f"attention with dropout_p={dropout}: kforge's attention has no dropout")
    causal = concrete(op, 5) == "True"
    dims = {"B": q[0], "H": q[1], "S": q[2], "SK": k[2], "D": q[3]}
    return dims, kforge_dtype(op, 0), "NN", "none", {"mask": "causal" if causal else "none"}


def problem_of(op):
    """The kforge problem an Op is ({op, dims, dtype, layout, epilogue, attrs, key}), or Uncovered."""
    if op.name in GEMM_OPS:
        kind, parts = "gemm", gemm_problem(op)
    elif op.name in NORM_OPS:
        kind, parts = NORM_OPS[op.name], norm_problem(op)
    elif op.name in SOFTMAX_OPS:
        kind, parts = "softmax", softmax_problem(op)
    elif op.name in ATTENTION_OPS:
        kind, parts = "attention", attention_problem(op)
    else:
        raise Uncovered(uncovered_reason(op))
    dims, dtype, layout, epilogue = parts[:4]
    attrs = parts[4] if len(parts) > 4 else {}
    return make_problem(kind, dims, dtype, layout, epilogue, attrs)


def make_problem(kind, dims, dtype, layout, epilogue, attrs):
    return {"op": kind, "dims": dims, "dtype": dtype, "layout": layout, "epilogue": epilogue, "attrs": attrs,
            "key": problem_key(kind, dims, dtype, layout, epilogue, attrs)}


def uncovered_reason(op):
    if not shape_list(op) and not type_list(op):
        return "no recorded inputs"
    if op.name in SILU_OPS:
        return (f"kforge has no operator for {op.name} alone (its swiglu is silu(gate) * up: an aten::mul "
                "of the silu's shape right after it, or after the up projection)")
    return f"kforge has no operator for {op.name}"


def problem_key(op, dims, dtype, layout, epilogue, attrs):
    """Problem::key() (generator/problem.cpp): op/dims/dtype/layout[/epilogue][/attrs]."""
    key = f"{op}/{','.join(f'{k}={dims[k]}' for k in sorted(dims))}/{dtype}/{layout}"
    if epilogue != "none":
        key += "/" + epilogue
    if attrs:
        key += "/" + ",".join(f"{k}={attrs[k]}" for k in sorted(attrs))
    return key


def shape_text(op):
    return ", ".join(f"{t or '?'}{list(s)}" if s else (t or "-")
                     for s, t in zip(shape_list(op), type_list(op) + [""] * len(shape_list(op))))


# ---------------------------------------------------------------------------
# Aggregation


def operator_rows(roots, steps, device_trace):
    """One row per (operator, inputs): calls, time (device time on a CUDA trace, else the host time
    of the operator less the covered operators inside it), and its problem or why not covered."""
    rows = {}
    for root in grouped([r for r in roots if in_steps(r, steps)]):
        for op, excluded in units(root):
            time_us = op.device_us() - sum(x.device_us() for x in excluded) if device_trace else \
                op.dur - sum(x.dur for x in excluded)
            host_us = op.dur - sum(x.dur for x in excluded)
            label = op.name + (" (rest)" if excluded else "")
            inputs = op.inputs if isinstance(op, Pattern) else shape_text(op)
            row = rows.get((label, inputs))
            if row is None:
                row = rows[(label, inputs)] = new_row(op, label, inputs)
            row["calls"] += 1
            row["time_us"] += time_us
            row["host_us"] += host_us
    return sorted(rows.values(), key=lambda r: (-r["time_us"], r["operator"], r["inputs"]))


def new_row(op, label, inputs):
    row = {"operator": label, "inputs": inputs, "calls": 0, "time_us": 0.0, "host_us": 0.0,
           "problem": None, "not_covered": None}
    if isinstance(op, Pattern):
        row["problem"], row["not_covered"] = op.problem, op.not_covered
        row["members"] = [m.name for m in op.members]
        return row
    if label != op.name:
        row["not_covered"] = "the operator's own work around the covered operators inside it"
        return row
    try:
        row["problem"] = problem_of(op)
    except Uncovered as e:
        row["not_covered"] = str(e)
    except (IndexError, TypeError, ValueError) as e:
        row["not_covered"] = f"inputs not understood ({type(e).__name__}: {e})"
    return row


def add_shares(rows, total_us, wall_us):
    for r in rows:
        r["share_of_time"] = r["time_us"] / total_us if total_us > 0 else 0.0
        r["share_of_wall"] = r["time_us"] / wall_us if wall_us > 0 else 0.0


def union_busy(kernels):
    """Merged [start, end) intervals of the device events, in time order."""
    merged = []
    for k in sorted(kernels, key=lambda k: k["ts"]):
        start, end = k["ts"], k["ts"] + k["dur"]
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def device_gaps(kernels, launches, start, end):
    """The device's idle time in [start, end): total, the part before the first and after the last
    kernel, and each gap between kernels, named launch-bound when the next kernel's launch call
    began after the device had gone idle (the device waited for the host)."""
    busy = [(max(s, start), min(e, end)) for s, e in union_busy(kernels) if e > start and s < end]
    first_of = {}
    for k in sorted(kernels, key=lambda k: k["ts"]):
        first_of.setdefault(k["ts"], k)
    gaps = []
    for (s0, e0), (s1, _) in zip(busy, busy[1:]):
        nxt = first_of.get(s1)
        launch = launches.get(nxt["correlation"]) if nxt else None
        launch_ts = float(launch["ts"]) if launch else None
        bound = launch_ts is not None and launch_ts >= e0
        gaps.append({"start_us": e0, "idle_us": s1 - e0, "before": nxt["name"] if nxt else "",
                     "kind": "launch-bound" if bound else "other (dependency, synchronisation or copy)"})
    idle = (end - start) - sum(e - s for s, e in busy)
    return {"busy_us": sum(e - s for s, e in busy), "idle_us": idle, "gaps": gaps,
            "edges_us": (busy[0][0] - start) + (end - busy[-1][1]) if busy else end - start,
            "launch_bound_us": sum(g["idle_us"] for g in gaps if g["kind"] == "launch-bound")}


def launch_regions(gaps, min_gaps=3):
    """Runs of at least min_gaps consecutive launch-bound gaps: (start, idle, kernels) each."""
    regions, run = [], []
    for g in gaps + [None]:
        if g is not None and g["kind"] == "launch-bound":
            run.append(g)
            continue
        if len(run) >= min_gaps:
            regions.append({"start_us": run[0]["start_us"], "idle_us": sum(x["idle_us"] for x in run),
                            "gaps": len(run), "kernels": sorted({x["before"] for x in run})})
        run = []
    return regions


# ---------------------------------------------------------------------------
# Speedups, the Amdahl ceiling and the plan


def canonical_config(manifest):
    """A template's default configuration's canonical name (generator/config.cpp): NAMEvalue_..."""
    params = sorted((p["name"], p["default"]) for p in manifest.get("parameters", []) if "default" in p)
    return "_".join(f"{n}{v}" for n, v in params)


def speedups_from_records(winners, results, default_configs):
    """{problem key: default median over winner median}: per problem, the fastest winner against the
    fastest ok result of a template's default configuration (default_configs: {template: config})."""
    out = {}
    best = {}
    for w in winners:
        if w["median_ms"] > 0 and (w["problem_key"] not in best or w["median_ms"] < best[w["problem_key"]]):
            best[w["problem_key"]] = w["median_ms"]
    for key, winner_ms in best.items():
        defaults = [r["median_ms"] for r in results
                    if r["problem_key"] == key and r["status"] == "ok" and r["median_ms"]
                    and default_configs.get(r["template_name"]) == r["config"]]
        if defaults:
            out[key] = min(defaults) / winner_ms
    return out


def speedups_from_database(path, keys):
    """Read the database at path (through the _kforge extension) for the problems in keys."""
    try:
        import kforge
    except ImportError as e:
        raise WorkloadError(f"{path}: reading a database needs the kforge extension ({e})") from None
    try:
        db = kforge.Database(str(path), read_only=True)
        winners = [w for w in db.winners() if w["problem_key"] in keys]
        results = [r for k in {w["problem_key"] for w in winners} for r in db.results(problem_key=k)]
        defaults = {}
        for op in {w["op"] for w in winners}:
            for t in kforge.templates(op):
                defaults[t["name"]] = canonical_config(t["manifest"])
    except kforge.KforgeError as e:
        raise WorkloadError(f"{path}: {e}") from None
    return speedups_from_records(winners, results, defaults)


def amdahl(rows, wall_us, speedups, assumed):
    """The step's time if every covered row ran at its speedup (known from the database, else the
    assumed factor), and the limit if covered rows took no time at all."""
    covered = [r for r in rows if r["problem"]]
    saved = 0.0
    for r in covered:
        known = speedups.get(r["problem"]["key"])
        r["speedup"] = known if known else assumed
        r["speedup_source"] = "database" if known else "assumed"
        saved += r["time_us"] - r["time_us"] / r["speedup"]
    covered_us = sum(r["time_us"] for r in covered)
    return {"covered_us": covered_us, "covered_share_of_wall": covered_us / wall_us if wall_us else 0.0,
            "step_us": wall_us, "step_after_us": wall_us - saved,
            "ceiling": wall_us / (wall_us - saved) if wall_us > saved else math.inf,
            "limit_if_free": wall_us / (wall_us - covered_us) if wall_us > covered_us else math.inf,
            "assumed_speedup": assumed,
            "from_database": sum(1 for r in covered if r["speedup_source"] == "database")}


def plan_of(rows, name, budget=None):
    """A sweep plan (docs/sweep.md): one entry per covered problem, by share of time, largest first;
    the same problem from several operators or calls planned once."""
    by_key = {}
    for r in rows:
        p = r["problem"]
        if p:
            by_key.setdefault(p["key"], [p, 0.0])[1] += r["time_us"]
    entries = []
    for p, _ in sorted(by_key.values(), key=lambda x: (-x[1], x[0]["key"])):
        entry = {"op": p["op"], "shapes": [",".join(f"{k}={v}" for k, v in p["dims"].items())],
                 "dtypes": [p["dtype"]]}
        if p["layout"] != "NN":
            entry["layouts"] = [p["layout"]]
        if p["epilogue"] != "none":
            entry["epilogues"] = [p["epilogue"]]
        if p["attrs"]:
            entry["attrs"] = [",".join(f"{k}={v}" for k, v in p["attrs"].items())]
        entries.append(entry)
    return {"schema_version": 1, "name": name,
            "description": "the covered operators of a profiled workload, largest share of time first",
            "budget": budget or {"strategy": "model", "max_evals": 24, "no_improvement": 12, "seed": 1},
            "entries": entries}


# ---------------------------------------------------------------------------
# The report


def analyse(doc, path, speedups=None, assumed=DEFAULT_ASSUMED_SPEEDUP):
    """The report of a checked trace (a dict; the same as --json prints)."""
    events = doc["traceEvents"]
    roots = build_trees([e for e in events if is_cpu_op(e)])
    kernels, launches, orphans = link_kernels(roots, events)
    start, end, steps = step_window(events, roots, kernels)
    wall_us = sum(e - s for s, e in steps)
    device_trace = bool(kernels)
    rows = operator_rows(roots, steps, device_trace)
    orphans = [k for k in orphans if any(s <= k["ts"] < e for s, e in steps)]
    if orphans:
        rows.append({"operator": "(device events without an operator)", "inputs": "", "calls": len(orphans),
                     "time_us": sum(k["dur"] for k in orphans), "host_us": 0.0, "problem": None,
                     "not_covered": "no launch call with its correlation id"})
    total_us = sum(r["time_us"] for r in rows)
    add_shares(rows, total_us, wall_us)
    report = {"trace": str(path), "device_trace": device_trace, "steps": len(steps), "wall_us": wall_us,
              "time_basis": "device time" if device_trace else "CPU operator time", "total_us": total_us,
              "operators": rows, "not_covered": not_covered_summary(rows)}
    if device_trace:
        step_kernels = [k for r in roots if in_steps(r, steps) for n in r.walk() for k in n.kernels] + orphans
        # The device runs behind the host: the step's kernels may end after its last host span.
        end = max([end] + [k["ts"] + k["dur"] for k in step_kernels])
        gaps = device_gaps(step_kernels, launches, start, end)
        gaps["launch_calls_us"] = sum(float(e.get("dur", 0.0)) for e in launches.values()
                                      if any(s <= float(e["ts"]) < en for s, en in steps))
        gaps["launch_regions"] = launch_regions(gaps["gaps"])
        report["device"] = gaps
    report["amdahl"] = amdahl(rows, wall_us, speedups or {}, assumed)
    return report


def not_covered_summary(rows):
    out = {}
    for r in rows:
        if r["problem"] is None:
            entry = out.setdefault(r["operator"], {"time_us": 0.0, "reasons": []})
            entry["time_us"] += r["time_us"]
            if r["not_covered"] not in entry["reasons"]:
                entry["reasons"].append(r["not_covered"])
    return out


def ms(us):
    return f"{us / US_PER_MS:.3f} ms"


def pct(x):
    return f"{100.0 * x:.1f}%"


def format_report(report, top=25):
    lines = [f"{report['trace']}: {report['steps']} step(s), wall {ms(report['wall_us'])}, "
             f"{report['time_basis']} {ms(report['total_us'])}"]
    lines.append(f"{'operator':<34} {'inputs':<44} {'calls':>5} {'time':>11} {'share':>6} {'wall':>6}  kforge")
    for r in report["operators"][:top]:
        what = r["problem"]["key"] if r["problem"] else "not covered: " + r["not_covered"]
        inputs = r["inputs"] if len(r["inputs"]) <= 44 else r["inputs"][:41] + "..."
        lines.append(f"{r['operator']:<34} {inputs:<44} {r['calls']:>5} {ms(r['time_us']):>11} "
                     f"{pct(r['share_of_time']):>6} {pct(r['share_of_wall']):>6}  {what}")
    if len(report["operators"]) > top:
        rest = report["operators"][top:]
        lines.append(f"... {len(rest)} more rows, {ms(sum(r['time_us'] for r in rest))} (--json lists them)")
    lines += device_lines(report)
    a = report["amdahl"]
    lines.append(f"covered by kforge: {ms(a['covered_us'])}, {pct(a['covered_share_of_wall'])} of the step")
    lines.append(f"Amdahl ceiling: the step {ms(a['step_us'])} -> {ms(a['step_after_us'])}, "
                 f"{a['ceiling']:.2f}x faster at the covered operators' speedups "
                 f"({a['from_database']} from the database, the rest assumed {a['assumed_speedup']:g}x); "
                 f"{a['limit_if_free']:.2f}x if they took no time")
    return "\n".join(lines)


def device_lines(report):
    if not report["device_trace"]:
        return ["device: no kernels in the trace (a CPU-only trace): shares are of CPU operator time, "
                "and there is no device idle time"]
    d = report["device"]
    lines = [f"device: busy {ms(d['busy_us'])}, idle {ms(d['idle_us'])} ({pct(d['idle_us'] / report['wall_us'])} "
             f"of the step), of which launch-bound {ms(d['launch_bound_us'])} in "
             f"{sum(1 for g in d['gaps'] if g['kind'] == 'launch-bound')} gaps; "
             f"host launch calls {ms(d['launch_calls_us'])}"]
    for r in d["launch_regions"]:
        lines.append(f"  launch-bound region at {r['start_us']:.0f} us: {r['gaps']} gaps, idle {ms(r['idle_us'])}"
                     f" (before {', '.join(r['kernels'][:3])}): the host, not the kernels")
    return lines


def json_ready(value):
    """The report with infinities as null (JSON has none)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value


# ---------------------------------------------------------------------------
# The receipt: two traces of one workload, before and after


def environment(doc):
    """What the trace says of where it ran: host, torch version (a top-level torch_version, as
    prof.add_metadata("torch_version", torch.__version__) writes it), devices."""
    devices = [d.get("name") for d in doc.get("deviceProperties") or [] if isinstance(d, dict) and d.get("name")]
    return {"host": doc.get("host_name") or doc.get("hostname"),
            "torch": doc.get("torch_version") or doc.get("pytorch_version"),
            "devices": devices or ["cpu only"]}


def per_problem(report):
    """The report's rows by what they are: the problem key of a covered row, else operator and inputs;
    time per step."""
    out = {}
    for r in report["operators"]:
        key = r["problem"]["key"] if r["problem"] else f"{r['operator']} ({r['inputs']})"
        e = out.setdefault(key, {"key": key, "operators": [], "covered": bool(r["problem"]), "calls": 0,
                                 "time_us": 0.0})
        if r["operator"] not in e["operators"]:
            e["operators"].append(r["operator"])
        e["calls"] += r["calls"]
        e["time_us"] += r["time_us"] / report["steps"]
    return out


def ratio(before, after):
    return before / after if after > 0 else math.inf


def compare(before_doc, before_path, after_doc, after_path, speedups=None):
    """The receipt (a dict; the same as compare --json prints): per operator and shape, the time per
    step before and after, the measured speedup and the expected one (the database's speedup over
    default, or None); end to end, the step time before and after, measured against the Amdahl
    expectation from the before trace's covered time at the database's speedups."""
    speedups = speedups or {}
    before, after = analyse(before_doc, before_path), analyse(after_doc, after_path)
    if before["device_trace"] != after["device_trace"]:
        cuda, cpu = (before_path, after_path) if before["device_trace"] else (after_path, before_path)
        raise WorkloadError(f"{cpu}: a CPU-only trace (no kernels), and {cuda} has kernels: their times "
                            "(host against device) do not compare")
    b, a = per_problem(before), per_problem(after)
    rows = []
    for key in sorted(set(b) & set(a), key=lambda k: (-b[k]["time_us"], k)):
        rows.append({"key": key, "operators": b[key]["operators"], "covered": b[key]["covered"],
                     "calls_before": b[key]["calls"], "calls_after": a[key]["calls"],
                     "before_us": b[key]["time_us"], "after_us": a[key]["time_us"],
                     "measured_speedup": ratio(b[key]["time_us"], a[key]["time_us"]),
                     "expected_speedup": speedups.get(key) if b[key]["covered"] else None})
    step_before, step_after = before["wall_us"] / before["steps"], after["wall_us"] / after["steps"]
    expected_after = None
    if speedups:
        saved = sum(e["time_us"] - e["time_us"] / speedups[k] for k, e in b.items()
                    if e["covered"] and speedups.get(k))
        expected_after = step_before - saved
    only = lambda x, y: [{"key": k, "operators": x[k]["operators"], "time_us": x[k]["time_us"]}
                         for k in sorted(set(x) - set(y), key=lambda k: (-x[k]["time_us"], k))]
    return {"before": str(before_path), "after": str(after_path), "time_basis": before["time_basis"],
            "steps": {"before": before["steps"], "after": after["steps"]},
            "environment": {"before": environment(before_doc), "after": environment(after_doc)},
            "operators": rows, "only_before": only(b, a), "only_after": only(a, b),
            "end_to_end": {"step_before_us": step_before, "step_after_us": step_after,
                           "measured_speedup": ratio(step_before, step_after),
                           "expected_step_after_us": expected_after,
                           "expected_speedup": ratio(step_before, expected_after) if expected_after is not None
                           else None,
                           "from_database": sum(1 for k, e in b.items() if e["covered"] and speedups.get(k))}}


def factor(x):
    return "-" if x is None else ("inf" if not math.isfinite(x) else f"{x:.2f}x")


def format_receipt(receipt, top=25):
    env_b, env_a = receipt["environment"]["before"], receipt["environment"]["after"]
    lines = [f"receipt: {receipt['before']} (before) -> {receipt['after']} (after); "
             f"{receipt['time_basis']} per step ({receipt['steps']['before']} and {receipt['steps']['after']} steps)"]
    for what in ("host", "torch", "devices"):
        vb, va = env_b[what], env_a[what]
        text = lambda v: ", ".join(v) if isinstance(v, list) else (v or "not recorded")
        lines.append(f"  {what}: {text(vb)}" + ("" if vb == va else f" -> {text(va)} (the traces differ)"))
    lines.append(f"{'operator / problem':<60} {'before':>10} {'after':>10} {'measured':>9} {'expected':>9}")
    for r in receipt["operators"][:top]:
        key = r["key"] if len(r["key"]) <= 60 else r["key"][:57] + "..."
        lines.append(f"{key:<60} {ms(r['before_us']):>10} {ms(r['after_us']):>10} "
                     f"{factor(r['measured_speedup']):>9} {factor(r['expected_speedup']):>9}")
    if len(receipt["operators"]) > top:
        lines.append(f"... {len(receipt['operators']) - top} more rows (--json lists them)")
    for side in ("before", "after"):
        for r in receipt["only_" + side]:
            lines.append(f"only in {side}: {r['key']} ({ms(r['time_us'])} per step)")
    e = receipt["end_to_end"]
    expected = (f"expected {factor(e['expected_speedup'])} (-> {ms(e['expected_step_after_us'])}; Amdahl over "
                f"the before trace, {e['from_database']} problem(s) at the database's speedups)"
                if e["expected_speedup"] is not None else "expected: none (no --db, or it knows none of them)")
    lines.append(f"end to end: the step {ms(e['step_before_us'])} -> {ms(e['step_after_us'])}, measured "
                 f"{factor(e['measured_speedup'])}; {expected}")
    return "\n".join(lines)


def compare_main(argv):
    parser = argparse.ArgumentParser(prog="python -m kforge.workload compare",
                                     description="A receipt: two torch.profiler traces of one workload, before "
                                                 "and after kforge's selections, per operator and end to end.")
    parser.add_argument("before", help="trace without kforge (record_shapes=True)")
    parser.add_argument("after", help="trace with kforge's selections")
    parser.add_argument("--db", help="a kforge database: the expected speedups over default of its winners")
    parser.add_argument("--json", action="store_true", help="print the receipt as JSON")
    parser.add_argument("--top", type=int, default=25, help="rows printed (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        before, after = load_trace(args.before), load_trace(args.after)
        speedups = {}
        if args.db:
            keys = {r["problem"]["key"] for r in analyse(before, args.before)["operators"] if r["problem"]}
            speedups = speedups_from_database(args.db, keys)
        receipt = compare(before, args.before, after, args.after, speedups)
    except WorkloadError as e:
        print(f"kforge.workload: {e}", file=sys.stderr)
        return 2
    print(json.dumps(json_ready(receipt), indent=1) if args.json else format_receipt(receipt, args.top))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        return compare_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m kforge.workload",
                                     description="Where a torch.profiler trace's time goes, what kforge covers, "
                                                 "the Amdahl ceiling, and a sweep plan.")
    parser.add_argument("trace", help="Chrome-trace JSON from torch.profiler (record_shapes=True)")
    parser.add_argument("--db", help="a kforge database: the tuned speedups over default of its winners")
    parser.add_argument("--plan", help="write a sweep plan (docs/sweep.md) of the covered problems here")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--assumed-speedup", type=float, default=DEFAULT_ASSUMED_SPEEDUP,
                        help="the speedup of a covered problem the database does not know (default %(default)s)")
    parser.add_argument("--top", type=int, default=25, help="rows printed (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except WorkloadError as e:
        print(f"kforge.workload: {e}", file=sys.stderr)
        return 2


def run(args):
    if not args.assumed_speedup > 0:
        raise WorkloadError(f"--assumed-speedup: {args.assumed_speedup} is not a positive factor")
    doc = load_trace(args.trace)
    report = analyse(doc, args.trace, assumed=args.assumed_speedup)
    if args.db:
        keys = {r["problem"]["key"] for r in report["operators"] if r["problem"]}
        report = analyse(doc, args.trace, speedups_from_database(args.db, keys), args.assumed_speedup)
    if args.plan:
        write_plan(report, args.trace, args.plan)
    print(json.dumps(json_ready(report), indent=1) if args.json else format_report(report, args.top))
    return 0


def write_plan(report, trace, path):
    plan = plan_of(report["operators"], name="workload-" + Path(trace).stem)
    plan["description"] += f" ({trace})"
    if not plan["entries"]:
        names = ", ".join(sorted(report["not_covered"])[:5])
        raise WorkloadError(f"{trace}: no operator kforge covers ({names}): no plan written")
    try:
        with open(path, "w") as f:
            json.dump(plan, f, indent=1)
            f.write("\n")
    except OSError as e:
        raise WorkloadError(f"{path}: cannot write the plan: {e.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
