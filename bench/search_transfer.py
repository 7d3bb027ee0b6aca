#!/usr/bin/env python3
"""What a warm start from another GPU's landscape gains at each budget.

For every pair of recorded landscapes of the same kernel on different GPUs
(../shared/landscapes: the convolution on an A100 and on a W7800), replays
kforge's strategies on the target landscape twice, at the same budgets and
seeds: cold, and warm-started from the source landscape as `kforge tune
--warm-start` would from a database holding the source GPU's result (its
fastest configuration proposed right after the default;
kforge_bench_strategy_replay --warm-from). Scores are search_replay.py's:
fraction of the target's optimum after B evaluations, median over seeds.

    bench/search_transfer.py [--replay build/bench/kforge_bench_strategy_replay] [--kforge build/kforge]
                             [--landscapes DIR] [--seeds 20] [--budgets 25,50,100,200]
                             [--strategies random,annealing,model] [--work DIR] [--out DIR]
"""
import argparse
import gzip
import itertools
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, write_receipt  # noqa: E402
from search_replay import kforge_scores  # noqa: E402


def kernel_of(path):
    with gzip.open(path, "rt") as f:
        d = json.load(f)
    return d["kernel_name"], d["device_name"]


def same_kernel_pairs(folder):
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".json.gz"))
    by_kernel = {}
    for path in files:
        kernel, device = kernel_of(path)
        by_kernel.setdefault(kernel, []).append((path, device))
    for kernel, members in sorted(by_kernel.items()):
        for (target, t_dev), (source, s_dev) in itertools.permutations(members, 2):
            yield kernel, (target, t_dev), (source, s_dev)


def convert(landscapes, path, work):
    name = os.path.basename(path)[:-len(".json.gz")]
    out = os.path.join(work, name + ".kforge.landscape.json")
    if not os.path.exists(out):
        subprocess.run([sys.executable, os.path.join(landscapes, "to_kforge.py"), path, "-o", out], check=True,
                       capture_output=True)
    return name, out


def markdown(receipt, budgets):
    lines = [f"# search_transfer ({receipt['context']['date']})", "",
             f"Command: `{receipt['context']['command']}`", "",
             f"{receipt['seeds']} seeds; fraction of the target's optimum (median over seeds) after B "
             "evaluations, cold and warm-started from the source GPU's fastest configuration.", ""]
    for pair in receipt["pairs"]:
        lines += [f"## {pair['target']} warm from {pair['source']} ({pair['kernel']})", "",
                  f"Source's fastest: `{pair['warm_start']}`", "",
                  "| strategy | start | " + " | ".join(f"B={b}" for b in budgets) + " |",
                  "|---|---|" + "---|" * len(budgets)]
        for s, r in pair["strategies"].items():
            for start in ("cold", "warm"):
                lines.append(f"| {s} | {start} | " + " | ".join(f"{r[start][str(b)]:.3f}" for b in budgets) + " |")
            lines.append(f"| {s} | gain | " +
                         " | ".join(f"{r['warm'][str(b)] - r['cold'][str(b)]:+.3f}" for b in budgets) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replay", default=os.path.join(ROOT, "build", "bench", "kforge_bench_strategy_replay"))
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--landscapes", default=os.path.join(os.path.dirname(ROOT), "shared", "landscapes"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="25,50,100,200")
    ap.add_argument("--strategies", default="random,annealing,model")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "search_transfer"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    os.makedirs(args.work, exist_ok=True)
    ctx = context(args.kforge, "search_transfer")
    ctx["command"] = "bench/search_transfer.py " + " ".join(sys.argv[1:])
    receipt = {"context": ctx, "seeds": args.seeds, "budgets": budgets, "pairs": []}
    for kernel, (target, t_dev), (source, s_dev) in same_kernel_pairs(args.landscapes):
        t_name, t_land = convert(args.landscapes, target, args.work)
        s_name, s_land = convert(args.landscapes, source, args.work)
        with open(s_land) as f:
            src = json.load(f)["landscape"]
        fastest = min((ms, c) for c, ms in src.items() if ms is not None)[1]
        pair = {"kernel": kernel, "target": f"{t_name} ({t_dev})", "source": f"{s_name} ({s_dev})",
                "warm_start": fastest, "strategies": {}}
        strategies = args.strategies.split(",")
        cold = dict(kforge_scores(args.replay, t_land, strategies, budgets, args.seeds, args.work, t_name))
        warm = dict(kforge_scores(args.replay, t_land, strategies, budgets, args.seeds, args.work, t_name + ".warm",
                                  extra=["--warm-from", s_land]))
        for s in strategies:
            pair["strategies"][s] = {"cold": cold[s]["median"], "warm": warm[s]["median"]}
        receipt["pairs"].append(pair)
        print(f"{t_name} <- {s_name}: done", file=sys.stderr)
    finish(ctx)
    write_receipt(args.out, "search_transfer", receipt, markdown(receipt, budgets))


if __name__ == "__main__":
    main()
