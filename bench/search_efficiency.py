#!/usr/bin/env python3
"""Search efficiency of kforge's strategies against a recorded landscape.

1. Records the landscape: `kforge tune --strategy exhaustive` over a GEMM
   space (the built-in gemm_simt_tiled with fewer values per parameter, a
   user-template copy: bench/restricted_template.py) on one device, then
   `kforge show --results --json` for every configuration's median.
2. Replays each strategy (exhaustive, random, annealing, model) with seeds
   1..N on a copy of that database: `kforge tune --strategy S --seed N
   --max-evals K`. The tuner reuses a stored result instead of running the
   candidate again and feeds it to the strategy like a fresh one, so the
   replay runs kforge's own strategy code and costs no device time; its
   progress lines (stderr, one per candidate, "(stored)" when reused) give the
   order the strategy picked. A replay line without "(stored)" means a
   candidate ran afresh; the script counts them and reports them.
3. For 5%, 10% and 25% of the space: fraction of the optimum reached =
   optimum median / best median found in the first ceil(p * space)
   candidates (0 when none succeeded), median over the seeds.

    bench/search_efficiency.py [--kforge build/kforge] [--size 128] [--seeds 10] [--space JSON]
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, run_json, utc_now  # noqa: E402
import restricted_template  # noqa: E402

TEMPLATE = "gemm/simt_tiled"
NAME = "gemm_simt_tiled_search"
# 69 valid configurations at 4096 threads / 512 KiB local memory.
SPACE = {"BM": [32, 64], "BN": [32, 64], "BK": [8, 16], "TM": [1, 2, 4], "TN": [1, 2, 4], "VW": [1, 2, 4],
         "PAD": [0]}
STRATEGIES = ["exhaustive", "random", "annealing", "model"]
FRACTIONS = [0.05, 0.10, 0.25]
LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+) (\S+) (\S+)( \(stored\))? ?(.*)$")


def problem_args(size, tpl_dir):
    return ["--op", "gemm", "--shape", f"M={size},N={size},K={size}", "--dtype", "f32", "--layout", "NN",
            "--template", tpl_dir, "--only-template", NAME]


def replay(kforge, base, landscape_db, tmp, strategy, seed, evals):
    """The configurations the strategy picks, in order, with whether each was stored."""
    db = os.path.join(tmp, f"replay-{strategy}-{seed}.db")
    shutil.copy(landscape_db, db)
    cmd = [kforge, "tune", *base, "--strategy", strategy, "--seed", str(seed), "--max-evals", str(evals), "--db", db]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    order = []
    for line in r.stderr.splitlines():
        m = LINE.match(line.strip())
        if m and m.group(3) == NAME:
            order.append({"config": m.group(4), "status": m.group(5), "stored": bool(m.group(6))})
    os.remove(db)
    return order, " ".join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--device", default="opencl:0")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--space", type=json.loads, default=SPACE,
                    help="parameter values as JSON, e.g. '{\"BM\": [32, 64], ...}' (default: the 69-configuration space)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()

    kforge = os.path.abspath(args.kforge)
    ctx = context(kforge, "search_efficiency", {"size": args.size, "space": args.space, "seeds": args.seeds})
    limits = restricted_template.device_limits(ctx["devices"], args.device)
    with tempfile.TemporaryDirectory() as tmp:
        tpl_dir, manifest = restricted_template.write(TEMPLATE, NAME, args.space, tmp)
        n_space = len(restricted_template.valid_configs(manifest, limits))
        base = problem_args(args.size, tpl_dir) + ["--device", args.device]
        landscape_db = os.path.join(tmp, "landscape.db")
        t0 = time.perf_counter()
        rec_cmd = [kforge, "tune", *base, "--strategy", "exhaustive", "--db", landscape_db, "--json"]
        recorded = run_json(rec_cmd)
        record_s = time.perf_counter() - t0
        print(f"landscape: {recorded['evaluated_now']} candidates in {record_s:.0f} s", file=sys.stderr)
        shown = run_json([kforge, "show", "--results", "--json", "--db", landscape_db])
        landscape = {r["config"]: (r["median_ms"] if r["status"] == "ok" else None)
                     for r in shown["results"] if r["template"] == NAME}
        ok = {c: t for c, t in landscape.items() if t is not None}
        optimum_cfg = min(ok, key=ok.get)
        optimum = ok[optimum_cfg]
        evals = math.ceil(max(FRACTIONS) * n_space)
        budgets = {f: math.ceil(f * n_space) for f in FRACTIONS}
        table, runs, fresh = {}, [], 0
        for strategy in STRATEGIES:
            per_fraction = {f: [] for f in FRACTIONS}
            for seed in range(1, args.seeds + 1):
                order, cmd = replay(kforge, base, landscape_db, tmp, strategy, seed, evals)
                fresh += sum(1 for o in order if not o["stored"])
                best = math.inf
                trace = []
                for o in order:
                    t = landscape.get(o["config"])
                    if t is not None:
                        best = min(best, t)
                    trace.append(best)
                for f, k in budgets.items():
                    b = trace[min(k, len(trace)) - 1] if trace else math.inf
                    per_fraction[f].append(optimum / b if b < math.inf else 0.0)
                runs.append({"strategy": strategy, "seed": seed, "command": cmd,
                             "order": [o["config"] for o in order]})
            table[strategy] = {f"{int(f * 100)}%": {"median": statistics.median(v), "per_seed": v}
                               for f, v in per_fraction.items()}
            print(f"{strategy}: " + ", ".join(f"{k} {v['median']:.3f}" for k, v in table[strategy].items()),
                  file=sys.stderr)
    finish(ctx)
    model10 = table["model"]["10%"]["median"]
    receipt = {
        "context": ctx,
        "landscape_command": " ".join(rec_cmd),
        "landscape_record_s": record_s,
        "space_size": n_space,
        "landscape_ok": len(ok),
        "landscape": landscape,
        "optimum": {"config": optimum_cfg, "median_ms": optimum},
        "budgets": {f"{int(f * 100)}%": k for f, k in budgets.items()},
        "fresh_candidates_in_replay": fresh,
        "table": table,
        "model_reaches_95pct_within_10pct": model10 >= 0.95,
        "runs": runs,
    }
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, f"search_efficiency-{stamp}")
    with open(out + ".json", "w") as f:
        json.dump(receipt, f, indent=2)
    md = markdown(receipt)
    with open(out + ".md", "w") as f:
        f.write(md)
    print(md)
    print(f"receipt: {os.path.relpath(out, ROOT)}.json / .md")


def markdown(r):
    c = r["context"]
    b = r["budgets"]
    lines = [
        f"# Search efficiency: GEMM {c['size']}^3 f32 NN, {r['space_size']} configurations "
        f"({r['landscape_ok']} ok), median over {c['seeds']} seeds",
        "",
        f"{c['date']}, kforge {c['git_revision']}, device {c['devices'][0]['name']}, CPU {c['cpu']} "
        f"x{c['cpu_count']}, load average {c['load_average_at_start'][0]:.1f} at start, "
        f"{c['load_average_at_end'][0]:.1f} at end. Landscape recorded once ({r['landscape_record_s']:.0f} s): "
        f"`{r['landscape_command']}`; optimum {r['optimum']['config']} {r['optimum']['median_ms']:.3f} ms. "
        f"Space: {json.dumps(c['space'])}. Each cell: median over seeds of optimum / best found after that many "
        f"candidates. Candidates run afresh during the replay: {r['fresh_candidates_in_replay']}.",
        "",
        "| strategy | " + " | ".join(f"{k} ({v} cand.)" for k, v in b.items()) + " |",
        "|---|" + "---|" * len(b),
    ]
    for s, row in r["table"].items():
        lines.append(f"| {s} | " + " | ".join(f"{row[k]['median']:.3f}" for k in b) + " |")
    lines += ["", f"Model-based strategy reaches >= 95% of the optimum within 10% of the space: "
              f"{'yes' if r['model_reaches_95pct_within_10pct'] else 'no'} "
              f"({r['table']['model']['10%']['median']:.3f}).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
