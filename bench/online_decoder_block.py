#!/usr/bin/env python3
"""bench/decoder_block.py's decode step with an empty database and online
tuning on (docs/runtime.md, "Online tuning").

For one decode phase (one token per sequence after `context` cached ones):
1. online: a lookup on an empty database with online="background" runs
   decode steps in a loop. Every step selects every operator again (the
   lookup caches selections, so this is cheap) and fetches a kernel again
   for each operator whose selection changed, then runs the block and
   checks its output against the float64 reference. A miss answers at once
   from the fallback chain and queues the problem for the tuner process;
   the loop goes on until every operator answers `exact`, then
   --steady-steps more (or stops at --max-steps / --max-seconds). The
   first step includes opening the kernels (compiled into a fresh binary
   cache).
2. offline: the same problems tuned into another database with the same
   per-problem budget (kforge.tune, --online-max-evals evaluations), and
   a lookup over it; its steady steps are interleaved with the online
   lookup's, so a change in the machine's load hits both alike.
3. interference: the offline-tuned block's step alone and while a second
   lookup's online tuner (another empty database, background mode) tunes
   gemm shapes unrelated to the block, alternated: per shape, steps alone,
   then the shape queued and steps while its tuner runs; steps alone
   again at the end. The tuner lowers itself to nice 19 and its candidate
   workers inherit it (the receipt records the nice values read from
   /proc while it ran); on PoCL its kernels are CPU threads of those
   processes, so the program's threads take the cores first.

    bench/online_decoder_block.py [--hidden 256 --heads 4 --mlp 688] [--context 128] [--decode-batch 1]
                                  [--online-max-evals 8] [--steady-steps 20] [--max-steps N]
                                  [--max-seconds S] [--noise-gemms 256x256x256,...] [--noise-max-evals N]
                                  [--interference-steps N] [--device auto] [--out DIR] [--tolerance T]

Writes bench/receipts/online_decoder_block-<stamp>.{json,md} (or under
--out). Exits 1 when a step's output is over the tolerance, 2 when the
online lookup never answered `exact` for every operator within the caps.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench_env import context, finish, write_receipt  # noqa: E402
import kforge  # noqa: E402
from decoder_block import median, relative_error, tune_missing  # noqa: E402
from decoder_block_model import BlockShape, Weights, reference_block  # noqa: E402
from decoder_block_plan import block_steps, distinct_problems  # noqa: E402
from decoder_block_run import KforgeBlock  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--mlp", type=int, default=688)
    ap.add_argument("--context", type=int, default=128, help="past tokens in the KV cache")
    ap.add_argument("--decode-batch", type=int, default=1)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"), help="the CLI, for the context")
    ap.add_argument("--online-max-evals", type=int, default=8, help="tuning budget per problem, online and offline")
    ap.add_argument("--online-time-budget", type=float, default=600.0,
                    help="online time budget per problem, seconds (large: the evaluations bound the tune)")
    ap.add_argument("--steady-steps", type=int, default=20, help="steps after every operator answers exact")
    ap.add_argument("--max-steps", type=int, default=20000, help="cap on the online run's steps")
    ap.add_argument("--max-seconds", type=float, default=1200.0, help="cap on the online run's tuning time")
    ap.add_argument("--noise-gemms", default="256x256x256,384x384x384,512x512x256",
                    help="MxNxK gemm shapes the interfering tuner tunes, comma-separated")
    ap.add_argument("--noise-max-evals", type=int, default=10)
    ap.add_argument("--interference-steps", type=int, default=20,
                    help="steps alone before each noise shape and at the end; while its tuner runs, every "
                         "step until it is idle (at most 10 times this)")
    ap.add_argument("--tolerance", type=float, default=2e-4,
                    help="largest normwise relative error of a step's output against float64")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    ap.add_argument("--work", default="", help="directory for the databases and binary cache (default: a temp "
                                               "directory, removed at the end)")
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()


def selection_key(sel):
    return (sel.rule, sel.template_name, str(sel.config))


def refresh(block, lookup, steps):
    """Selects every step again; fetches the kernel again where the selection
    changed. Returns the names of the steps that changed."""
    changed = []
    for s in steps:
        sel = lookup.select(s.op, s.dims, attrs=s.attrs)
        if selection_key(sel) != selection_key(block.sel[s.name]):
            block.sel[s.name], block.kernel[s.name] = sel, lookup.kernel(sel)
            changed.append(s.name)
    return changed


class Stepper:
    """One lookup's block, stepped: select again, run, check against float64."""

    def __init__(self, lookup, shape, weights, steps, inputs, ref, tolerance):
        self.lookup, self.steps, self.inputs, self.ref, self.tolerance = lookup, steps, inputs, ref, tolerance
        self.shape, self.weights, self.block = shape, weights, None

    def step(self):
        t0 = time.perf_counter()
        if self.block is None:
            self.block, changed = KforgeBlock(self.lookup, self.shape, self.weights, self.steps), ["all"]
        else:
            changed = refresh(self.block, self.lookup, self.steps)
        out = self.block.run(self.inputs)
        wall = (time.perf_counter() - t0) * 1e3
        err = relative_error(out, self.ref)
        rules = {name: s.rule for name, s in self.block.sel.items()}
        return {"wall_ms": wall, "error": err, "valid": err <= self.tolerance, "changed": changed,
                "exact": sum(r == "exact" for r in rules.values()), "rules": rules}


def run_online(stepper, args, log):
    """Steps until every operator answers exact, then --steady-steps more."""
    rows, t0, all_exact = [], time.perf_counter(), None
    n_ops = len(stepper.steps)
    while len(rows) < args.max_steps:
        row = stepper.step()
        row.update(step=len(rows), t_s=time.perf_counter() - t0, tuner_busy=not stepper.lookup.wait_online(0))
        rows.append(row)
        if row["exact"] == n_ops and all_exact is None:
            all_exact = row["step"]
            log(f"step {all_exact}: every operator exact after {row['t_s']:.1f} s")
        if row["changed"] and row["step"] > 0:
            log(f"step {row['step']} ({row['t_s']:.1f} s): {row['exact']}/{n_ops} exact, new {row['changed']}")
        if all_exact is not None and row["step"] - all_exact >= args.steady_steps:
            break
        if all_exact is None and row["t_s"] > args.max_seconds:
            break
    return rows, all_exact


def summarize_online(rows, all_exact):
    """The online run's numbers; per step wall ms, exact count and tuner
    state, and the rules in full at each step where a selection changed."""
    tuning = [r["wall_ms"] for r in rows[1:all_exact if all_exact is not None else len(rows)]]
    steady = rows[all_exact + 1:] if all_exact is not None else []
    return {"first_step_ms": rows[0]["wall_ms"], "second_step_ms": rows[1]["wall_ms"] if len(rows) > 1 else None,
            "all_exact_step": all_exact, "all_exact_s": rows[all_exact]["t_s"] if all_exact is not None else None,
            "steps_run": len(rows), "tuning_steps": len(tuning),
            "tuning_median_ms": median(tuning) if tuning else None,
            "steady_in_run_median_ms": median([r["wall_ms"] for r in steady]) if steady else None,
            "max_error": max(r["error"] for r in rows), "invalid_steps": [r["step"] for r in rows if not r["valid"]],
            "first_rules": rows[0]["rules"],
            "wall_ms": [round(r["wall_ms"], 3) for r in rows], "exact": [r["exact"] for r in rows],
            "tuner_busy": [int(r["tuner_busy"]) for r in rows],
            "changes": [{"step": r["step"], "t_s": round(r["t_s"], 3), "changed": r["changed"], "rules": r["rules"]}
                        for r in rows if r["changed"]]}


def interleaved(steppers, n):
    """n steps of each stepper, alternating; wall ms lists and validity."""
    walls = {name: [] for name in steppers}
    valid = True
    for _ in range(n):
        for name, st in steppers.items():
            row = st.step()
            walls[name].append(row["wall_ms"])
            valid &= row["valid"]
    return walls, valid


def tuner_nice():
    """{"tuner" | "worker": nice values} of this process's descendant online
    tuner processes and their candidate workers, read from /proc."""
    parents, info = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        parents[int(pid)] = int(fields[1])
        kind = "tuner" if ("_online_tune" in cmd or "__online-tune" in cmd) else \
            "worker" if "kforge._worker" in cmd else None
        if kind:
            info[int(pid)] = (kind, int(fields[16]))

    def ours(pid):
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    seen = {}
    for pid, (kind, nice) in info.items():
        if ours(pid):
            seen.setdefault(kind, set()).add(nice)
    return seen


def steps_while_busy(stepper, noise, cap, seen):
    """Steps of the block while the noise lookup's tuner runs through them."""
    busy, valid = [], True
    while len(busy) < cap and not noise.wait_online(0):
        row = stepper.step()
        valid &= row["valid"]
        if not noise.wait_online(0):  # the tuner ran through the whole step
            busy.append(row["wall_ms"])
        if len(busy) % 5 == 1:
            for kind, nices in tuner_nice().items():
                seen.setdefault(kind, set()).update(nices)
    return busy, valid


def run_interference(stepper, device, work, args, log):
    """The offline block alone and while an unrelated online tune runs,
    alternated: per noise shape, steps alone, then the shape queued and
    steps while its tuner runs; steps alone again at the end."""
    noise = kforge.Lookup(device, db=os.path.join(work, "noise.db"), cache_dir=os.path.join(work, "noise-cache"),
                          online="background", online_max_evals=args.noise_max_evals,
                          online_time_budget_s=args.online_time_budget)
    shapes = [dict(zip("MNK", map(int, s.split("x")))) for s in args.noise_gemms.split(",")]
    alone, busy, seen, valid, first = [], [], {}, True, []
    t0 = time.perf_counter()
    for dims in shapes:
        walls, v = interleaved({"a": stepper}, args.interference_steps)
        alone += walls["a"]
        first.append(noise.select("gemm", dims).rule)
        b, vb = steps_while_busy(stepper, noise, 10 * args.interference_steps, seen)
        busy += b
        valid &= v and vb
        noise.wait_online(args.max_seconds)  # the rest of this shape's tune, if the cap stopped the steps
    noise_s = time.perf_counter() - t0
    done = noise.wait_online(args.max_seconds)
    walls, v = interleaved({"a": stepper}, args.interference_steps)
    alone += walls["a"]
    log(f"interference: {len(busy)} steps while the tuner ran, {len(alone)} alone")
    after = [noise.select("gemm", dims).rule for dims in shapes]
    return {"noise_problems": [f"gemm M={d['M']} N={d['N']} K={d['K']}" for d in shapes],
            "noise_max_evals": args.noise_max_evals, "noise_rules_first": first, "noise_rules_after": after,
            "noise_finished": done, "noise_s": noise_s,
            "tuner_processes_nice": {k: sorted(v) for k, v in seen.items()},
            "alone_ms": alone, "busy_ms": busy, "alone_median_ms": median(alone),
            "busy_median_ms": median(busy) if busy else None,
            "slowdown": median(busy) / median(alone) if busy else None, "valid": bool(valid and v)}


def markdown(r):
    s, on, off, it = r["shape"], r["online"], r["offline"], r["interference"]
    ctx = r["context"]
    fmt = lambda x, f="{:.2f}": "—" if x is None else f.format(x)  # noqa: E731
    lines = [f"# online_decoder_block ({ctx['date']})", "", f"Command: `{r['command']}`", "",
             f"Device: {r['device']}. Block: hidden {s['hidden']}, {s['heads']} heads of {s['head_dim']}, "
             f"MLP {s['mlp']}, f32; decode, batch {r['batch']}, context {s['context']}: {r['operators']} "
             f"launches, {r['problems']} distinct problems. Online: background mode, "
             f"{r['online_max_evals']} evaluations per problem (time budget {r['online_time_budget_s']:g} s); "
             f"offline: kforge.tune with the same {r['online_max_evals']} evaluations per problem. Every step's "
             f"output against float64 at most {r['tolerance']:g}: {'yes' if r['valid'] else 'NO'} "
             f"(worst {r['worst_error']:.2e}). Load average {ctx['load_average_at_start'][0]:.2f} at the start, "
             f"{ctx['load_average_at_end'][0]:.2f} at the end, on {ctx['cpu_count']} CPUs.", "",
             "## Online, from an empty database", "",
             "| first step ms | second step ms | all exact at step | after s | median step ms while tuning "
             "(steps) | steady median ms (online) | steady median ms (offline) | online / offline |",
             "|---|---|---|---|---|---|---|---|",
             f"| {fmt(on['first_step_ms'])} | {fmt(on['second_step_ms'])} | {fmt(on['all_exact_step'], '{}')} | "
             f"{fmt(on['all_exact_s'], '{:.1f}')} | {fmt(on['tuning_median_ms'])} ({on['tuning_steps']}) | "
             f"{fmt(r['steady']['online_median_ms'])} | {fmt(r['steady']['offline_median_ms'])} | "
             f"{fmt(r['steady']['ratio'], '{:.3f}')} |", "",
             f"Offline tuning took {off['tune_s']:.1f} s. Steady steps: {r['steady']['steps']} of each lookup, "
             f"interleaved, after the offline tuning; the online run's own {r['steady']['steps']} steps after "
             f"all answered exact: median {fmt(on['steady_in_run_median_ms'])} ms. When each operator first "
             "answered exact (step, seconds):", "",
             "| operator | first rule | exact at step | s | online selection | offline selection |",
             "|---|---|---|---|---|---|"]
    for name, e in r["exact_at"].items():
        lines.append(f"| {name} | {on['first_rules'][name]} | {fmt(e['step'], '{}')} | {fmt(e['t_s'], '{:.1f}')} | "
                     f"{r['selections']['online'][name]} | {r['selections']['offline'][name]} |")
    nice = ", ".join(f"{k} {'/'.join(map(str, v))}" for k, v in sorted(it["tuner_processes_nice"].items()))
    lines += ["", "## Interference: the offline-tuned step while an online tuner works", "",
              f"The tuner tuned {', '.join(it['noise_problems'])} ({it['noise_max_evals']} evaluations each, "
              f"another database, one shape at a time between steps alone) in {it['noise_s']:.1f} s, finished: "
              f"{it['noise_finished']}. The tuner lowers itself to nice 19 (nice read from /proc while it ran: "
              f"{nice or 'no process seen'}; a tuner reads 0 while Python starts, before the job lowers it), and "
              "its candidate workers inherit it; on PoCL the tuner's kernels are threads of those processes, "
              "so the program's threads take the cores first.", "",
              "| alone median ms (steps) | while tuning median ms (steps) | slowdown |", "|---|---|---|",
              f"| {it['alone_median_ms']:.2f} ({len(it['alone_ms'])}) | {fmt(it['busy_median_ms'])} "
              f"({len(it['busy_ms'])}) | {fmt(it['slowdown'], '{:.3f}')}× |", ""]
    return "\n".join(lines) + "\n"


def exact_at(rows):
    """Per operator: the first step (and its time) at which it answered exact."""
    out = {}
    for name in rows[0]["rules"]:
        hit = next((r for r in rows if r["rules"][name] == "exact"), None)
        out[name] = {"step": hit["step"] if hit else None, "t_s": hit["t_s"] if hit else None}
    return out


def main():
    args = parse_args()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    device = kforge.open_device(args.device)
    shape = BlockShape(args.hidden, args.heads, args.mlp, 1, args.context)
    weights = Weights(shape, np.random.default_rng(args.seed))
    steps = block_steps(shape, "decode", args.decode_batch)
    problems = distinct_problems(steps)
    inputs = weights.phase_inputs("decode", args.decode_batch, np.random.default_rng(args.seed + args.decode_batch))
    ref = reference_block(shape, weights, inputs, "decode")
    ctx = context(args.kforge, "online_decoder_block")
    work = args.work or tempfile.mkdtemp(prefix="online_decoder_block-")
    os.makedirs(work, exist_ok=True)
    cache = os.path.join(work, "cache")
    try:
        online = kforge.Lookup(device, db=os.path.join(work, "online.db"), cache_dir=cache, online="background",
                               online_max_evals=args.online_max_evals, online_time_budget_s=args.online_time_budget)
        on_step = Stepper(online, shape, weights, steps, inputs, ref, args.tolerance)
        rows, all_exact = run_online(on_step, args, log)
        t0 = time.perf_counter()
        tuning = tune_missing(device, os.path.join(work, "offline.db"), problems, args.online_max_evals, log)
        tune_s = time.perf_counter() - t0
        off_step = Stepper(kforge.Lookup(device, db=os.path.join(work, "offline.db"), cache_dir=cache), shape,
                           weights, steps, inputs, ref, args.tolerance)
        warm = off_step.step()  # opens the offline kernels, untimed
        walls, steady_valid = interleaved({"online": on_step, "offline": off_step}, args.steady_steps)
        interference = run_interference(off_step, device, work, args, log)
        log_text = read_log(os.path.join(work, "online.db.online.log"))
        selections = {k: {n: f"{s.template_name} {s.config} ({s.rule})" for n, s in st.block.sel.items()}
                      for k, st in (("online", on_step), ("offline", off_step))}
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    finish(ctx)
    on = summarize_online(rows, all_exact)
    valid = all(r["valid"] for r in rows) and warm["valid"] and steady_valid and interference["valid"]
    receipt = {
        "context": ctx, "command": " ".join(["bench/online_decoder_block.py"] + sys.argv[1:]),
        "device": device.name, "shape": shape.as_dict(), "phase": "decode", "batch": args.decode_batch,
        "operators": len(steps), "problems": len(problems), "tolerance": args.tolerance,
        "online_max_evals": args.online_max_evals, "online_time_budget_s": args.online_time_budget,
        "valid": bool(valid), "worst_error": on["max_error"],
        "online": on, "exact_at": exact_at(rows),
        "offline": {"tuning": tuning, "tune_s": tune_s},
        "steady": {"steps": args.steady_steps, "online_ms": walls["online"], "offline_ms": walls["offline"],
                   "online_median_ms": median(walls["online"]), "offline_median_ms": median(walls["offline"]),
                   "ratio": median(walls["online"]) / median(walls["offline"])},
        "selections": selections, "interference": interference, "online_log_tail": log_text[-4000:]}
    write_receipt(args.out, "online_decoder_block", receipt, markdown(receipt))
    if not valid:
        return 1
    return 0 if all_exact is not None else 2


def read_log(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
