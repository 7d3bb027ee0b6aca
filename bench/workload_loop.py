#!/usr/bin/env python3
"""The workload loop end to end, on a small PyTorch model (bench/workload_loop_model.py):

1. record a torch.profiler trace (CPU, record_shapes=True) of the eager model: a warm-up, then
   --steps profiled steps;
2. `python -m kforge.workload BEFORE --plan`: the report and the sweep plan of the covered
   problems, kept to those torch.ops.kforge launches (gemm, rmsnorm, softmax, attention; the
   SwiGLU stays eager) at a budget of --max-evals per problem;
3. `kforge sweep PLAN --db DB` (the CLI from --kforge, else $KFORGE_CLI);
4. the same model with its covered operators replaced by torch.ops.kforge.*, selecting through
   a Lookup on DB: its output against the eager output (normwise relative error
   max|kforge - eager| / max|eager| of the logits and of the probabilities, at most
   --tolerance), and a second trace;
5. `python -m kforge.workload compare BEFORE AFTER --db DB`: the receipt, written with the
   run's environment to bench/receipts/workload_loop-<UTC stamp>.{json,md} (or under --out).

    bench/workload_loop.py [--tiny] [--hidden H --heads N --mlp M --tokens T --layers L --classes C]
                           [--steps S] [--max-evals E] [--device SEL] [--kforge CLI] [--db PATH]
                           [--work DIR] [--out DIR] [--tolerance X] [--host-threads N]

Exits 1 when the kforge run's output is over the tolerance (after writing the receipt).
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench_env import context, finish, write_receipt  # noqa: E402
import kforge  # noqa: E402
import kforge.torch_ops  # noqa: E402  (registers torch.ops.kforge.*)
from workload_loop_model import EagerOps, KforgeOps, Shape, forward, random_input, random_weights  # noqa: E402

SIZES = {"tiny": {"hidden": 32, "heads": 2, "mlp": 48, "tokens": 8, "layers": 1, "classes": 16, "steps": 2,
                  "max_evals": 2},
         "realistic": {"hidden": 512, "heads": 8, "mlp": 1376, "tokens": 128, "layers": 2, "classes": 1024,
                       "steps": 3, "max_evals": 6}}
TORCH_OP_PROBLEMS = {"gemm", "rmsnorm", "softmax", "attention"}  # what torch.ops.kforge launches


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiny", action="store_true", help="the CI size (hidden 32, 8 tokens, one block)")
    for name in ("hidden", "heads", "mlp", "tokens", "layers", "classes", "steps", "max_evals"):
        ap.add_argument("--" + name.replace("_", "-"), type=int, help=f"default: {SIZES['realistic'][name]} "
                        f"({SIZES['tiny'][name]} with --tiny)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--kforge", default=os.environ.get("KFORGE_CLI", os.path.join(ROOT, "build", "kforge")))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "workload_loop"),
                    help="traces, plan and (by default) the database")
    ap.add_argument("--db", help="default: WORK/workload_loop.db (a sweep resumes: finished problems are kept)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="largest normwise relative error of the kforge run's outputs against eager")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--host-threads", type=int, default=0, help="PyTorch's intra-op threads (0: its default)")
    args = ap.parse_args(argv)
    for name, value in SIZES["tiny" if args.tiny else "realistic"].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.db = args.db or os.path.join(args.work, "workload_loop.db")
    return args


def log(message):
    print(message, file=sys.stderr, flush=True)


def record_trace(ops, shape, weights, x, path, steps):
    """Runs the model once (the output), then profiles a warm-up step and `steps` steps."""
    with torch.inference_mode():
        out = forward(ops, shape, weights, x)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                     schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                     on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
            prof.add_metadata("torch_version", torch.__version__)
            for _ in range(1 + steps):
                forward(ops, shape, weights, x)
                prof.step()
    log(f"{ops.name} trace: {path}")
    return out


def run_tool(cmd):
    """Runs a command; its stdout, or SystemExit with its output."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-4000:]}")
    return done.stdout


def workload(*args):
    """`python -m kforge.workload ARGS`: (the command, its stdout)."""
    cmd = [sys.executable, "-m", "kforge.workload", *map(str, args)]
    return " ".join(["python", *cmd[1:]]), run_tool(cmd)


def launchable_plan(written, path, max_evals):
    """The report's plan kept to the problems torch.ops.kforge launches, at max_evals per problem."""
    with open(written) as f:
        plan = json.load(f)
    dropped = [e for e in plan["entries"] if e["op"] not in TORCH_OP_PROBLEMS]
    plan["entries"] = [e for e in plan["entries"] if e["op"] in TORCH_OP_PROBLEMS]
    plan["budget"] = {"strategy": "model", "max_evals": max_evals, "no_improvement": max_evals, "seed": 1}
    with open(path, "w") as f:
        json.dump(plan, f, indent=1)
    return plan, dropped


def sweep(args, plan_path):
    """`kforge sweep PLAN --db DB --device SEL --json`: (the command, its parsed output)."""
    cmd = [args.kforge, "sweep", plan_path, "--db", args.db, "--device", args.device, "--json"]
    t0 = time.perf_counter()
    out = json.loads(run_tool(cmd))
    log(f"sweep: {len(out['tasks'])} task(s) in {time.perf_counter() - t0:.1f} s")
    return " ".join(cmd), out


def selections(lookup, problems):
    """What the lookup selects for each covered problem of the report: rule, template, config."""
    out = {}
    for p in problems:
        s = lookup.select(p["op"], p["dims"], p["dtype"], p["layout"], p["epilogue"], p["attrs"])
        out[p["key"]] = {"rule": s.rule, "template": s.template_name, "config": str(s.config)}
    return out


def relative_error(out, ref):
    """max over the outputs of max|out - ref| / max|ref|."""
    return max(float((o.double() - r.double()).abs().max() / r.double().abs().max().clamp_min(1e-30))
               for o, r in zip(out, ref))


def launched_problems(report):
    """The report's covered problems that torch.ops.kforge launches, once each."""
    seen = {}
    for row in report["operators"]:
        if row["problem"] and row["problem"]["op"] in TORCH_OP_PROBLEMS:
            seen.setdefault(row["problem"]["key"], row["problem"])
    return list(seen.values())


def tasks_of(sweep_out):
    return [{"key": t["key"], "state": t["state"], "evaluated": t.get("evaluated"),
             "winner": t.get("winner")} for t in sweep_out["tasks"]]


def step_loop(args, shape):
    """Steps 1 to 5; the receipt's body."""
    os.makedirs(args.work, exist_ok=True)
    weights, x = random_weights(shape, args.seed), random_input(shape, args.seed)
    before, after = os.path.join(args.work, "before.json"), os.path.join(args.work, "after.json")
    written, plan_path = os.path.join(args.work, "report_plan.json"), os.path.join(args.work, "plan.json")
    eager_out = record_trace(EagerOps, shape, weights, x, before, args.steps)
    report_cmd, report_text = workload(before, "--plan", written)
    _, report_json = workload(before, "--json")
    report = json.loads(report_json)
    plan, dropped = launchable_plan(written, plan_path, args.max_evals)
    sweep_cmd, sweep_out = sweep(args, plan_path)
    lookup = kforge.Lookup(kforge.open_device(args.device), db=args.db)
    kforge.torch_ops.use(lookup)
    kforge_out = record_trace(KforgeOps, shape, weights, x, after, args.steps)
    error = relative_error(kforge_out, eager_out)
    compare_cmd, receipt_text = workload("compare", before, after, "--db", args.db)
    _, receipt_json = workload("compare", before, after, "--db", args.db, "--json")
    return {"report": {"command": report_cmd, "text": report_text, "steps": report["steps"],
                       "wall_us": report["wall_us"], "amdahl": report["amdahl"]},
            "plan": {"path": plan_path, "entries": plan["entries"], "budget": plan["budget"],
                     "not_launched": [{"op": e["op"], "shapes": e["shapes"],
                                       "reason": "torch.ops.kforge has no such op: it stays eager"}
                                      for e in dropped]},
            "sweep": {"command": sweep_cmd, "time_s": sweep_out.get("time_s"), "tasks": tasks_of(sweep_out)},
            "selections": selections(lookup, launched_problems(report)),
            "validation": {"error": error, "tolerance": args.tolerance, "valid": error <= args.tolerance},
            "compare": {"command": compare_cmd, "text": receipt_text, "receipt": json.loads(receipt_json)}}


def markdown(receipt):
    s, v, e = receipt["shape"], receipt["validation"], receipt["compare"]["receipt"]["end_to_end"]
    ctx = receipt["context"]
    lines = [f"# workload_loop ({ctx['date']})", "", f"Command: `{receipt['command']}`", "",
             f"Model: {s['layers']} decoder-like block(s), hidden {s['hidden']}, {s['heads']} heads, MLP {s['mlp']}, "
             f"{s['tokens']} tokens, a head of {s['classes']} classes, f32 on the CPU (PyTorch {torch.__version__}, "
             f"{ctx['torch_threads']} threads); kforge on {receipt['device']}. Load average at start "
             f"{ctx['load_average_at_start'][0]:.1f}, at end {ctx['load_average_at_end'][0]:.1f} on "
             f"{ctx['cpu_count']} CPUs.", "",
             f"Output of the kforge run against eager: normwise relative error {v['error']:.2e} "
             f"(tolerance {v['tolerance']:g}): {'within' if v['valid'] else 'OVER'}.", "",
             f"End to end (CPU operator time per step): {e['step_before_us'] / 1e3:.3f} ms eager, "
             f"{e['step_after_us'] / 1e3:.3f} ms through kforge, measured {e['measured_speedup']:.2f}x.", "",
             "## Sweep", "", f"`{receipt['sweep']['command']}`", "", "| problem | state | evaluated | winner |",
             "|---|---|---|---|"]
    for t in receipt["sweep"]["tasks"]:
        w = t["winner"] or {}
        lines.append(f"| {t['key']} | {t['state']} | {t['evaluated']} | {w.get('template', '-')} "
                     f"{w.get('config', '')} |")
    for d in receipt["plan"]["not_launched"]:
        lines.append(f"| {d['op']} {', '.join(d['shapes'])} | not planned | | {d['reason']} |")
    lines += ["", "## Selections of the kforge run", "", "| problem | rule | template | config |", "|---|---|---|---|"]
    lines += [f"| {k} | {v['rule']} | {v['template']} | {v['config']} |" for k, v in receipt["selections"].items()]
    lines += ["", "## Report of the eager trace", "", f"`{receipt['report']['command']}`", "", "```",
              receipt["report"]["text"].rstrip(), "```", "", "## Receipt", "", f"`{receipt['compare']['command']}`",
              "", "```", receipt["compare"]["text"].rstrip(), "```", ""]
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    if args.host_threads > 0:
        torch.set_num_threads(args.host_threads)
    shape = Shape(args.hidden, args.heads, args.mlp, args.tokens, args.layers, args.classes)
    ctx = context(args.kforge, "workload_loop", {"torch": torch.__version__, "torch_threads": torch.get_num_threads()})
    body = step_loop(args, shape)
    receipt = {"context": finish(ctx), "command": " ".join(["bench/workload_loop.py"] + sys.argv[1:]),
               "device": kforge.open_device(args.device).name, "shape": shape.as_dict(), "steps": args.steps,
               "max_evals": args.max_evals, "db": args.db, **body}
    write_receipt(args.out, "workload_loop", receipt, markdown(receipt))
    return 0 if receipt["validation"]["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
