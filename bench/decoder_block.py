#!/usr/bin/env python3
"""A Llama-style decoder block built from kforge's runtime selections.

The block, per layer: RMSNorm -> Q, K, V projections -> RoPE on Q and K ->
causal attention over the KV cache -> output projection + residual (gemm
with beta = 1) -> RMSNorm -> fused gate|up projection -> SwiGLU -> down
projection + residual. Two phases: prefill (S tokens from position 0) and
decode (one token per sequence at position `context`, attending to a cache
of `context` past keys and values plus its own).

For each phase the script
1. tunes every distinct problem of the block into --db (skipped for those
   the database already holds) unless --no-tune;
2. validates the block's output, run through the tuned selections and
   through the templates' defaults, against a float64 NumPy reference of
   the same block on the same f32 inputs (normwise relative error, stated
   in the receipt, at most --tolerance);
3. times the block (median of --reps runs): wall time of the whole block
   and each operator's device time, with the tuned selections, with the
   defaults, and with PyTorch eager (when PyTorch is installed) and NumPy
   (host BLAS, f32) for the same block;
4. times each operator alone (the same kernel launched --reps times on its
   own) to get its isolated speedup, and states the end-to-end gain those
   speedups and the operators' shares predict (Amdahl) beside the measured
   one.

Between operators the activations are host NumPy arrays: the Python
package copies each tensor to the device and back on every launch
(docs/python.md), and the head-major permutes of Q, K, V and O and the KV
cache append are NumPy copies ("glue" in the receipt). Per-operator device
times exclude those copies; the block's wall time includes them.

    bench/decoder_block.py [--hidden 4096 --heads 32 --mlp 14336] [--seq 2048] [--context 4096]
                           [--batch 1] [--decode-batch 1,16] [--device auto] [--db PATH]
                           [--max-evals N] [--reps R] [--out DIR] [--tolerance T]

Writes bench/receipts/decoder_block-<stamp>.{json,md} (or under --out) and
exits 1 when a validation fails.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from bench_env import context, finish, write_receipt  # noqa: E402
import kforge  # noqa: E402
from decoder_block_model import BlockShape, Weights, reference_block, numpy_block, torch_block  # noqa: E402
from decoder_block_plan import block_steps, distinct_problems  # noqa: E402
from decoder_block_run import KforgeBlock  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--mlp", type=int, default=176)
    ap.add_argument("--seq", type=int, default=16, help="prefill tokens per sequence")
    ap.add_argument("--context", type=int, default=24, help="decode: past tokens in the KV cache")
    ap.add_argument("--batch", type=int, default=1, help="prefill sequences")
    ap.add_argument("--decode-batch", default="1", help="decode batch sizes, comma-separated")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"), help="the CLI, for the context")
    ap.add_argument("--db", default=os.path.join(ROOT, "build", "decoder_block.db"))
    ap.add_argument("--no-tune", action="store_true", help="use --db as it is")
    ap.add_argument("--max-evals", type=int, default=8, help="tuning budget per distinct problem")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=2e-4,
                    help="largest normwise relative error of the block's output against float64")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--host-threads", type=int, default=0,
                    help="PyTorch's intra-op threads for the eager block (0: PyTorch's default). On a loaded "
                         "host, spinning OpenMP threads slow PyTorch several-fold: 1 keeps it fair")
    return ap.parse_args()


def tune_missing(device, db_path, problems, max_evals, log):
    """Tunes each problem for which the database holds no exact winner yet."""
    held = kforge.Lookup(device, db=db_path) if os.path.exists(db_path) else None
    tuned = []
    for p in problems:
        rule = held.select(p.op, p.dims, attrs=p.attrs).rule if held else "none"
        row = {"problem": p.label(), "held": rule == "exact"}
        if rule != "exact":
            summary = kforge.tune(device, p.op, p.dims, attrs=p.attrs, db=db_path, max_evals=max_evals)
            row.update(winner=summary.winner.template, config=str(summary.winner.config),
                       evaluated=summary.get("evaluated"))
        tuned.append(row)
        log(f"tune {p.label()}: " + ("held" if row["held"] else row["winner"]))
    return tuned


def relative_error(out, ref):
    return float(np.max(np.abs(out.astype(np.float64) - ref)) / max(np.max(np.abs(ref)), 1e-30))


def median(xs):
    return float(np.median(np.asarray(xs)))


def run_phase(args, device, shape, weights, phase, batch, log):
    """Validates and times one phase; returns its receipt section."""
    steps = block_steps(shape, phase, batch)
    inputs = weights.phase_inputs(phase, batch, np.random.default_rng(args.seed + batch))
    ref = reference_block(shape, weights, inputs, phase)
    variants = {"tuned": kforge.Lookup(device, db=args.db), "default": kforge.Lookup(device)}
    section = {"phase": phase, "batch": batch, "tokens": int(inputs["x"].shape[0] * inputs["x"].shape[1]),
               "steps": [s.label() for s in steps], "variants": {}}
    blocks = {name: KforgeBlock(lookup, shape, weights, steps) for name, lookup in variants.items()}
    errors = {name: relative_error(b.run(inputs), ref) for name, b in blocks.items()}  # also warms up
    walls = {name: [] for name in blocks}
    op_times = {name: [] for name in blocks}
    for _ in range(args.reps):  # interleaved, so a change in the machine's load hits every variant alike
        for name, block in blocks.items():
            t0 = time.perf_counter()
            block.run(inputs)
            walls[name].append((time.perf_counter() - t0) * 1e3)
            op_times[name].append(dict(block.last_times))
    for name, block in blocks.items():
        per_op = {k: median([t[k] for t in op_times[name]]) for k in op_times[name][0]}
        section["variants"][name] = {
            "error": errors[name], "valid": errors[name] <= args.tolerance, "wall_ms": median(walls[name]),
            "device_ms": sum(per_op.values()), "per_op_ms": per_op,
            "isolated_ms": {k: block.isolated_ms(k, inputs, args.reps) for k in per_op},
            "selections": block.selections()}
        log(f"{phase} B={batch} {name}: error {errors[name]:.2e}, block {median(walls[name]):.3f} ms")
    for name, fn in (("numpy", numpy_block), ("torch", torch_block)):
        section["variants"][name] = eager_variant(fn, shape, weights, inputs, ref, args, phase)
    section["amdahl"] = amdahl(section["variants"]["default"], section["variants"]["tuned"])
    return section


def eager_variant(fn, shape, weights, inputs, ref, args, phase):
    """The same block in an eager framework, f32, on the host (or not available)."""
    try:
        out = fn(shape, weights, inputs, phase)
    except ImportError as e:
        return {"available": False, "reason": str(e)}
    walls = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        fn(shape, weights, inputs, phase)
        walls.append((time.perf_counter() - t0) * 1e3)
    err = relative_error(out, ref)
    return {"available": True, "error": err, "valid": err <= args.tolerance, "wall_ms": median(walls)}


def torch_threads(wanted):
    """Sets PyTorch's intra-op threads when asked; what it uses, or None without PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    if wanted > 0:
        torch.set_num_threads(wanted)
    return torch.get_num_threads()


def amdahl(default, tuned):
    """Expected block speedup from each operator's isolated speedup and its
    share of the default block's wall time, beside the measured one."""
    wall = default["wall_ms"]
    ops = {}
    rest = wall  # what no operator speedup touches: glue, copies, launch overhead
    expected_wall = 0.0
    for k, d_ms in default["per_op_ms"].items():
        iso = default["isolated_ms"][k] / max(tuned["isolated_ms"][k], 1e-9)
        inside = d_ms / max(tuned["per_op_ms"][k], 1e-9)
        share = d_ms / wall
        rest -= d_ms
        expected_wall += d_ms / iso
        ops[k] = {"share_of_block": share, "isolated_speedup": iso, "in_block_speedup": inside,
                  "survived": bool(inside >= 1 + 0.5 * (iso - 1)) if iso > 1.05 else None}
    expected_wall += max(rest, 0.0)
    return {"ops": ops, "glue_share": max(rest, 0.0) / wall, "expected_speedup": wall / expected_wall,
            "measured_speedup": wall / tuned["wall_ms"]}


def markdown(receipt):
    s = receipt["shape"]
    lines = [f"# decoder_block ({receipt['context']['date']})", "",
             f"Command: `{receipt['command']}`", "",
             f"Device: {receipt['device']}. Block: hidden {s['hidden']}, {s['heads']} heads of {s['head_dim']}, "
             f"MLP {s['mlp']}, f32 activations; prefill {s['seq']} tokens, decode at context {s['context']}. "
             f"Tolerance: normwise relative error of the block's output against float64 at most "
             f"{receipt['tolerance']:g}. Median of {receipt['reps']} runs. Load average at start "
             f"{receipt['context']['load_average_at_start'][0]:.1f} on {receipt['context']['cpu_count']} CPUs; "
             f"PyTorch threads: {receipt['context'].get('torch_threads') or 'no PyTorch'}.", ""]
    for sec in receipt["phases"]:
        v = sec["variants"]
        lines += [f"## {sec['phase']}, batch {sec['batch']}", "",
                  "| variant | block wall ms | tokens/s | kernels ms | glue ms | error | valid |",
                  "|---|---|---|---|---|---|---|"]
        for name in ("tuned", "default", "numpy", "torch"):
            r = v[name]
            if not r.get("available", True):
                lines.append(f"| {name} | not available: {r['reason']} | | | | | |")
                continue
            kernels, glue = "—", "—"
            if "device_ms" in r:
                kernels, glue = f"{r['device_ms']:.3f}", f"{r['wall_ms'] - r['device_ms']:.3f}"
            lines.append(f"| {name} | {r['wall_ms']:.3f} | {sec['tokens'] / r['wall_ms'] * 1e3:.0f} | {kernels} | {glue} | "
                         f"{r['error']:.2e} | {'yes' if r['valid'] else 'NO'} |")
        a = sec["amdahl"]
        lines += ["", "| operator | share of default block | tuned ms | default ms | isolated speedup | "
                  "in-block speedup | survived |", "|---|---|---|---|---|---|---|"]
        for k, o in a["ops"].items():
            surv = "—" if o["survived"] is None else ("yes" if o["survived"] else "no")
            lines.append(f"| {k} | {o['share_of_block']:.1%} | {v['tuned']['per_op_ms'][k]:.4f} | "
                         f"{v['default']['per_op_ms'][k]:.4f} | {o['isolated_speedup']:.2f}× | "
                         f"{o['in_block_speedup']:.2f}× | {surv} |")
        lines += ["", f"Glue (copies, permutes, cache append, launch overhead): {a['glue_share']:.1%} of the "
                  f"default block. Expected block speedup from the isolated speedups and shares: "
                  f"{a['expected_speedup']:.3f}×; measured: {a['measured_speedup']:.3f}×.", ""]
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    device = kforge.open_device(args.device)
    shape = BlockShape(args.hidden, args.heads, args.mlp, args.seq, args.context)
    weights = Weights(shape, np.random.default_rng(args.seed))
    ctx = context(args.kforge, "decoder_block")
    ctx["torch_threads"] = torch_threads(args.host_threads)
    batches = [("prefill", args.batch)] + [("decode", int(b)) for b in args.decode_batch.split(",")]
    tuned = []
    if not args.no_tune:
        problems = distinct_problems([s for ph, b in batches for s in block_steps(shape, ph, b)])
        tuned = tune_missing(device, args.db, problems, args.max_evals, log)
    receipt = {"context": ctx, "command": " ".join(["bench/decoder_block.py"] + sys.argv[1:]),
               "device": device.name, "shape": shape.as_dict(), "tolerance": args.tolerance, "reps": args.reps,
               "db": args.db, "tuning": tuned,
               "phases": [run_phase(args, device, shape, weights, ph, b, log) for ph, b in batches]}
    finish(ctx)
    write_receipt(args.out, "decoder_block", receipt, markdown(receipt))
    ok = all(v.get("valid", True) for sec in receipt["phases"] for v in sec["variants"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
