#!/usr/bin/env python3
"""What building several instances as one program saves on PoCL
(generator/program_combiner.hpp; docs/measurement.md, "Combined programs").

Runs build/bench/kforge_bench_combined_programs --repeat times, alternating:
N gemm_simt_tiled instances built one program each ("alone") and the same N
as one combined program ("combined"), each run in a fresh process and a fresh
PoCL kernel cache; per way, the build seconds and the first launches'
seconds (one work-group of each, where PoCL generates the machine code).
Also N builds of a trivial kernel: the fixed cost of a program. Medians go
in the table; every run is in the receipt.

    bench/combined_programs.py [--build build] [--instances 8] [--repeat 3]
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

MODES = ("alone", "combined", "trivial")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(bench_env.ROOT, "build"))
    ap.add_argument("--instances", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    kforge = os.path.join(a.build, "kforge")
    tool = os.path.join(a.build, "bench", "kforge_bench_combined_programs")
    ctx = bench_env.context(kforge, "combined_programs")
    runs = {m: [] for m in MODES}
    for _ in range(a.repeat):
        for mode in MODES:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, POCL_CACHE_DIR=cache)
                runs[mode].append(bench_env.run_json([tool, mode, str(a.instances)], env=env))
    bench_env.finish(ctx)
    med = {m: {k: statistics.median(r[k] for r in runs[m]) for k in runs[m][0] if k.endswith("_s")} for m in MODES}
    n = a.instances
    alone, combined = med["alone"], med["combined"]
    total = {m: med[m]["build_s"] + med[m]["first_launches_s"] for m in ("alone", "combined")}
    md = [f"# {n} gemm_simt_tiled instances on PoCL: one program each vs one combined program", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}, "
          f"load average {ctx['load_average_at_start'][0]:.1f} at start, {ctx['load_average_at_end'][0]:.1f} at end; "
          f"median of {a.repeat} runs each, alternated, each in a fresh process and PoCL cache.", "",
          "| way | build s | first launches s | total s |", "|---|---|---|---|",
          f"| one program each | {alone['build_s']:.2f} | {alone['first_launches_s']:.2f} | {total['alone']:.2f} |",
          f"| one combined program | {combined['build_s']:.2f} | {combined['first_launches_s']:.2f} | "
          f"{total['combined']:.2f} |", "",
          f"{n} builds of a trivial kernel: {med['trivial']['build_s']:.2f} s "
          f"({med['trivial']['build_s'] / n:.3f} s each, the fixed cost of a program). "
          f"Combined: {total['alone'] / total['combined']:.2f}x less compile time.", "",
          f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "combined_programs", {"context": ctx, "median": med, "runs": runs}, "\n".join(md))


if __name__ == "__main__":
    main()
