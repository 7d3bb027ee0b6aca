#!/usr/bin/env python3
"""A launch through the kforge runtime against the same kernel launched with
the OpenCL API directly, on the same device and queue.

Runs build/bench/kforge_bench_launch: per round, N launches of a small gemm
in each mode followed by one wait, modes alternating within a round:

  direct           clSetKernelArg + clEnqueueNDRangeKernel, no event
  lookup_enqueue   Lookup::enqueue: the argument checks, then Device::enqueue
  lookup_timed     Lookup::launch: events around each kernel, and a wait

The figure is wall time per launch (submission and the kernel's run, since
the queue is in order), as the median over rounds; ratios are to direct in
the same round set. Then the same three modes for one decode step of the
decoder block (12 launches of 6 operators, batch 1 after 256 cached tokens,
each problem's default selection, buffers on the device), launches/10 steps
per round, per step. Writes a JSON and markdown receipt with the environment.

    bench/launch_overhead.py [--build build] [--shape 16 16 16] [--launches 1000] [--rounds 7]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, run_json, write_receipt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shape", type=int, nargs=3, default=[16, 16, 16])
    ap.add_argument("--launches", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()
    kforge = os.path.join(args.build, "kforge")
    ctx = context(kforge, "launch_overhead")
    bench = os.path.join(args.build, "bench", "kforge_bench_launch")
    r = run_json([bench, *map(str, args.shape), "--launches", str(args.launches), "--rounds", str(args.rounds)])
    receipt = {"context": finish(ctx), "result": r}
    lines = [f"# launch_overhead: {r['problem']} ({r['selection']}) on {r['device']['name']}", "",
             f"{r['launches_per_round']} launches per mode per round, {r['rounds']} rounds; "
             f"load average {ctx['load_average_at_start']} -> {ctx['load_average_at_end']}", "",
             "| mode | µs per launch (median) | / direct |", "|---|---|---|"]
    for name, m in r["modes"].items():
        lines.append(f"| {name} | {m['per_launch_us_median']:.2f} | {m['ratio_to_direct']:.3f} |")
    step = r["decode_step"]
    lines += ["", f"Decode step of the decoder block ({len(step['launches'])} launches, each problem's default "
              f"selection), {step['steps_per_round']} steps per mode per round:", "",
              "| mode | µs per step (median) | / direct |", "|---|---|---|"]
    for name, m in step["modes"].items():
        lines.append(f"| {name} | {m['per_step_us_median']:.1f} | {m['ratio_to_direct']:.3f} |")
    lines += [""] + [f"- {launch}" for launch in step["launches"]]
    write_receipt(args.out, "launch_overhead", receipt, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
