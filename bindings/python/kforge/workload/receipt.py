"""The receipt: two traces of one workload, before and after kforge's selections, per operator
and end to end."""
import math

from .report import analyse, ms
from .trace import WorkloadError


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
