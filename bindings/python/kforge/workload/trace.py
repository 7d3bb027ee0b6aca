"""Reading a torch.profiler Chrome trace: checked input, the operator trees per thread, device
kernels linked to their launches, the profiler steps and the units of work."""
import json

from .patterns import Pattern, grouped
from .problems import COVERED_OPS


DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATEGORIES = {"cuda_runtime", "cuda_driver", "hip_runtime"}


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
