#!/usr/bin/env python3
"""What Triton's compiler makes of a Triton template on each target, read by
kforge's own readers: `kforge compile --triton` (docs/triton.md) for
cuda:sm_80, cuda:sm_90a and hip:gfx942, a receipt with registers, shared
memory, spills, occupancy, the tensor-core instruction counts and what
would be pruned. Compile-only: no GPU, no timing.

    bench/triton_compile_only.py [--kforge build/kforge] [--template templates/triton/gemm_dot]
        [--shape M=4096,N=4096,K=4096] [--dtype bf16] [--max-configs 6]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, write_receipt  # noqa: E402

TARGETS = ["cuda:sm_80", "cuda:sm_90a", "hip:gfx942"]
COUNTED = ["mma", "mfma", "ldmatrix", "tma", "cp_async", "ld_shared", "lds_load"]


def compile_target(args, target):
    cmd = [args.kforge, "compile", "--target", target, "--triton", args.template, "--op", args.op, "--shape",
           args.shape, "--dtype", args.dtype, "--max-configs", str(args.max_configs), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    shown = [os.path.relpath(a, ROOT) if os.path.isabs(a) else a for a in cmd]
    return " ".join(shown), json.loads(out.stdout)


def mix_text(c):
    mix = (c.get("instruction_mix") or {}).get("categories", {})
    return ", ".join(f"{k} {mix[k]}" for k in COUNTED if mix.get(k)) or "-"


def table(report):
    rows = ["| config | status | regs | smem B | spill st/ld | threads | occupancy | instructions | why |",
            "|---|---|---|---|---|---|---|---|---|"]
    for c in report["candidates"]:
        rows.append(f"| {c['config']} | {c['status']} | {c['registers']} | {c['shared_bytes']} | "
                    f"{c['spill_stores']}/{c['spill_loads']} | {c['threads_per_block']} | "
                    f"{100 * c['occupancy']:.1f}% ({c['occupancy_limiter']}) | {mix_text(c)} | {c.get('reason', '')} |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    p.add_argument("--template", default=os.path.join(ROOT, "templates", "triton", "gemm_dot"))
    p.add_argument("--op", default="gemm")
    p.add_argument("--shape", default="M=4096,N=4096,K=4096")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--max-configs", type=int, default=6)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = p.parse_args()
    import triton  # the version the helpers compile with, for the receipt
    ctx = context(args.kforge, "triton_compile_only", {"triton": triton.__version__})
    results = {t: compile_target(args, t) for t in TARGETS}
    ctx = finish(ctx)
    md = [f"# Triton compile-only: {os.path.relpath(args.template, ROOT)}, {args.op} {args.shape} {args.dtype}", "",
          f"{ctx['date']}, kforge {ctx['kforge']} ({ctx['git_revision']}), Triton {triton.__version__}, "
          f"host {ctx['host']}. No GPU: compiled and read, never run.", ""]
    for target, (cmd, report) in results.items():
        md += [f"## {target} ({report['compiler']})", "", f"`{cmd}`", "", table(report), ""]
    write_receipt(args.out, "triton_compile_only", {"context": ctx, "results": {t: r for t, (_, r) in results.items()}},
                  "\n".join(md))


if __name__ == "__main__":
    main()
