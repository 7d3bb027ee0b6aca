#!/usr/bin/env python3
"""A strategy's cost against the size of the space: runs
kforge_bench_strategy_cost (CPU time of a proposal and of a model update
after the same history, synthetic cartesian spaces of 1e3 to 1e7
configurations) and writes a receipt with the curve.

    bench/strategy_cost.py [--bench build/bench/kforge_bench_strategy_cost] [--kforge build/kforge]
                           [--sizes 1e3,1e4,1e5,1e6,1e7] [--history 100] [--strategy model]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, run_json, write_receipt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench", "kforge_bench_strategy_cost"))
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--sizes", default="1e3,1e4,1e5,1e6,1e7")
    ap.add_argument("--history", default="100")
    ap.add_argument("--strategy", default="model")
    args = ap.parse_args()
    ctx = context(args.kforge, "strategy_cost")
    got = run_json([args.bench, "--sizes", args.sizes, "--history", args.history, "--strategy", args.strategy])
    finish(ctx)
    lines = [f"# strategy_cost ({ctx['date']})", "", f"Command: `{ctx['command']}`", "",
             f"Strategy {args.strategy}; after {args.history} evaluations; CPU time of this thread.", "",
             "| configurations | proposal median ms | p90 ms | model update median ms | strategy construction s |",
             "|---|---|---|---|---|"]
    for s in got["spaces"]:
        lines.append(f"| {s['configurations']:,} | {s['proposal']['median_us'] / 1e3:.2f} | "
                     f"{s['proposal']['p90_us'] / 1e3:.2f} | {s['model_update']['median_us'] / 1e3:.2f} | "
                     f"{s['strategy_construct_s']:.3f} |")
    write_receipt(os.path.join(ROOT, "bench", "receipts"), "strategy_cost", {"context": ctx, **got},
                  "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
