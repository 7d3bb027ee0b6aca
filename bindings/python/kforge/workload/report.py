"""The report of one trace: rows per operator and inputs, device gaps and launch-bound regions,
speedups, the Amdahl ceiling, the sweep plan, and its text form."""
import math

from .patterns import Pattern, grouped
from .problems import Uncovered, problem_of, shape_text
from .trace import WorkloadError, build_trees, in_steps, is_cpu_op, link_kernels, step_window, units


US_PER_MS = 1000.0
DEFAULT_ASSUMED_SPEEDUP = 1.5


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
