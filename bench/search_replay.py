#!/usr/bin/env python3
"""kforge's search strategies against Kernel Tuner's, replayed on the same
recorded GPU landscapes, at the same budgets and seeds, scored on the same
time table.

1. Converts every Kernel Tuner cache file in --landscapes (default
   ../shared/landscapes beside the checkout; its README says what they are)
   with that folder's to_kforge.py into the replay's landscape shape.
2. Replays kforge's strategies with kforge_bench_strategy_replay
   (--budgets, --json): the tuner's own strategy code, seeds 1..N, the
   converter's "center" configuration as the default every kforge strategy
   proposes first.
3. Replays Kernel Tuner's strategies on the same cache files
   (tune_kernel(..., simulation_mode=True, cache=FILE)); each strategy and
   seed (Python's and numpy's generators seeded with it) runs once per
   budget with strategy_options max_fevals = that budget, or, with
   --prefix, once at the largest budget and is scored on the prefixes of
   its order. Kernel Tuner's restrictions are not in the files; the
   configurations a file holds are the valid space, passed as a
   restriction. Kernel Tuner is installed into bench/.venv (pip,
   --system-site-packages) on first use; a strategy whose package is
   missing (skopt, pyatf) is reported as skipped. --no-kernel-tuner skips
   this step (no install, no run): kforge's strategies alone.
4. Scores both on one table: each configuration's time is the median of
   its recorded samples; fraction of the optimum after B evaluations =
   optimum / best time among the first B distinct configurations
   evaluated (a failed one counts as an evaluation that found nothing);
   the median over seeds. Strategy overhead per evaluation: kforge's
   next() time (kforge_bench_strategy_replay); Kernel Tuner's wall time of
   tune_kernel in simulation mode divided by the configurations it
   evaluated (its strategy plus its simulation's bookkeeping).

Kernel Tuner's results are kept in --work (default build/search_replay) per
landscape, strategy, budget and seed, so an interrupted run resumes.

    bench/search_replay.py [--replay build/bench/kforge_bench_strategy_replay] [--kforge build/kforge]
                           [--landscapes DIR] [--seeds 20] [--budgets 10,15,25,50,100,200]
                           [--no-kernel-tuner] [--kt-strategies a,b,...] [--kforge-strategies random,annealing,model]
                           [--only NAME,...] [--prefix] [--work DIR]
"""
import argparse
import glob
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, write_receipt  # noqa: E402

VENV = os.path.join(ROOT, "bench", ".venv")
# Kernel Tuner 1.x's single-objective strategies but brute force.
KT_STRATEGIES = ["random_sample", "minimize", "basinhopping", "diff_evo", "genetic_algorithm", "greedy_mls",
                 "ordered_greedy_mls", "greedy_ils", "dual_annealing", "mls", "pso", "simulated_annealing", "skopt",
                 "firefly_algorithm", "bayes_opt", "pyatf_strategies", "hybrid_vndx", "adaptive_tabu_greywolf"]


def venv_python():
    """bench/.venv's Python with kernel_tuner, installing it on first use."""
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        print("bench/.venv: creating it for kernel_tuner", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", VENV], check=True)
    if subprocess.run([py, "-c", "import kernel_tuner"], capture_output=True).returncode != 0:
        print("bench/.venv: pip install kernel_tuner", file=sys.stderr)
        subprocess.run([py, "-m", "pip", "install", "-q", "kernel_tuner"], check=True)
    return py


def load_cache(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def median_table(cache):
    """Cache key -> median of its samples (None when the configuration failed)."""
    table = {}
    for key, e in cache["cache"].items():
        t = e.get("time")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not (0 < t < 1e19):
            table[key] = None
            continue
        times = [x for x in (e.get("times") or []) if isinstance(x, (int, float)) and not isinstance(x, bool)]
        table[key] = statistics.median(times) if times else float(t)
    return table


def fractions(order, table, budgets):
    """Optimum / best time among the first B distinct configurations of `order`, per budget."""
    optimum = min(t for t in table.values() if t is not None)
    seen, best, out = set(), None, {}
    distinct = []
    for key in order:
        if key not in seen:
            seen.add(key)
            distinct.append(key)
    for b in budgets:
        times = [table.get(k) for k in distinct[:b]]
        times = [t for t in times if t is not None]
        best = min(times) if times else None
        out[b] = optimum / best if best else 0.0
    return out


def kt_worker(args):
    """Runs one Kernel Tuner strategy over one cache file for the given seeds
    and budget, in bench/.venv; writes {seed: {order, seconds}} as JSON."""
    import random
    import warnings

    import numpy
    from kernel_tuner import tune_kernel

    warnings.simplefilter("ignore")
    cache = load_cache(args.cache)
    keys = cache["tune_params_keys"]
    valid = set(cache["cache"].keys())
    params = {k: cache["tune_params"][k] for k in keys}

    def restriction(*args):
        # Kernel Tuner calls a one-argument restriction with a dict, others with the values in order.
        values = [args[0][k] for k in keys] if len(args) == 1 and isinstance(args[0], dict) else args
        return ",".join(str(v) for v in values) in valid

    out = {}
    for seed in args.seeds_list:
        random.seed(seed)
        numpy.random.seed(seed)
        started = time.perf_counter()
        results, _ = tune_kernel(cache["kernel_name"], "__global__ void %s() {}" % cache["kernel_name"],
                                 cache["problem_size"], [], params, strategy=args.strategy,
                                 strategy_options={"max_fevals": args.budget}, simulation_mode=True,
                                 cache=args.cache, restrictions=restriction,
                                 verbose=False, quiet=True, lang="CUDA")
        seconds = time.perf_counter() - started
        order = [",".join(str(r[k]) for k in keys) for r in results]
        outside = [key for key in order if key not in valid]
        if outside:
            raise SystemExit(f"{args.cache}: {args.strategy} evaluated {outside[0]}, which the file does not hold")
        out[seed] = {"order": order, "seconds": seconds}
    with open(args.out, "w") as f:
        json.dump(out, f)


def run_kt(py, cache_json, strategy, budget, seeds, path):
    """Kernel Tuner's orders for seeds 1..N, from `path` when an earlier run left it."""
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    r = subprocess.run([py, os.path.abspath(__file__), "--kt-worker", "--cache", cache_json, "--strategy", strategy,
                        "--budget", str(budget), "--seeds", str(seeds), "--out", path + ".tmp"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        tail = r.stderr.strip().splitlines()[-1:] or ["exit %d" % r.returncode]
        return {"skipped": tail[0][:300]}
    os.replace(path + ".tmp", path)
    with open(path) as f:
        return json.load(f)


def kt_scores(py, name, cache_json, table, strategy, budgets, seeds, prefix, work):
    """Per budget: every seed's fraction; and the overhead per evaluation (s)."""
    per_budget = {b: [] for b in budgets}
    seconds, evaluations = 0.0, 0
    for run_budget in ([max(budgets)] if prefix else budgets):
        got = run_kt(py, cache_json, strategy, run_budget, seeds, os.path.join(work, f"{name}.{strategy}.{run_budget}.json"))
        if "skipped" in got:
            return {"skipped": got["skipped"]}
        for seed in range(1, seeds + 1):
            run = got[str(seed)]
            f = fractions(run["order"], table, budgets if prefix else [run_budget])
            for b, v in f.items():
                per_budget[b].append(v)
            seconds += run["seconds"]
            evaluations += len(set(run["order"]))
    return {"per_seed": {str(b): v for b, v in per_budget.items()},
            "median": {str(b): statistics.median(v) for b, v in per_budget.items()},
            "overhead_ms_per_eval": 1e3 * seconds / max(evaluations, 1)}


def kforge_scores(replay, landscape, strategies, budgets, seeds, work, name, extra=()):
    out = os.path.join(work, f"{name}.kforge.json")
    cmd = [replay, landscape, "--seeds", str(seeds), "--budgets", ",".join(map(str, budgets)), "--json", out,
           "--guesses", "0", *extra]
    for s in strategies:
        r = subprocess.run(cmd + ["--strategy", s], capture_output=True, text=True)
        if r.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
        with open(out) as f:
            got = json.load(f)["strategies"][s]
        yield s, {"per_seed": {str(b): got["per_seed"][i] for i, b in enumerate(budgets)},
                  "median": {str(b): got["median"][i] for i, b in enumerate(budgets)},
                  "overhead_ms_per_eval": got["proposal_us"]["mean"] / 1e3}


def markdown(receipt, budgets):
    if receipt.get("no_kernel_tuner"):
        kt_runs = "none (--no-kernel-tuner)"
    elif receipt["prefix"]:
        kt_runs = "one per seed at the largest budget, scored on its prefixes"
    else:
        kt_runs = "one per budget and seed"
    lines = [f"# search_replay ({receipt['context']['date']})", "",
             f"Command: `{receipt['context']['command']}`", "",
             f"{receipt['seeds']} seeds; fraction of the optimum (median over seeds) after B evaluations; "
             f"Kernel Tuner runs: {kt_runs}.", ""]
    for name, land in receipt["landscapes"].items():
        lines += [f"## {name} ({land['configurations']} configurations)", "",
                  "| strategy | " + " | ".join(f"B={b}" for b in budgets) + " | overhead ms/eval |",
                  "|---|" + "---|" * (len(budgets) + 1)]
        rows = [("kforge " + s, r) for s, r in land["kforge"].items()]
        rows += [("KT " + s, r) for s, r in land["kernel_tuner"].items() if "skipped" not in r]
        for label, r in rows:
            lines.append(f"| {label} | " + " | ".join(f"{r['median'][str(b)]:.3f}" for b in budgets) +
                         f" | {r['overhead_ms_per_eval']:.3f} |")
        if land["best_kt"]:
            lines.append("| best KT | " + " | ".join(f"{land['best_kt'][str(b)]['fraction']:.3f} ({land['best_kt'][str(b)]['strategy']})"
                                                   for b in budgets) + " | |")
        lines.append("")
    skipped = {s: r["skipped"] for land in receipt["landscapes"].values() for s, r in land["kernel_tuner"].items()
               if "skipped" in r}
    if skipped:
        lines += ["Kernel Tuner strategies skipped: " + "; ".join(f"{s} ({why})" for s, why in skipped.items()), ""]
    if not receipt["verdict"]:
        return "\n".join(lines)
    lines += ["Verdict (kforge " + receipt["default_strategy"] + " at or above the best Kernel Tuner strategy): " +
              ", ".join(f"{n} B={b}: {'yes' if v else 'no'}" for n, per in receipt["verdict"].items()
                        for b, v in per.items()), ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replay", default=os.path.join(ROOT, "build", "bench", "kforge_bench_strategy_replay"))
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--landscapes", default=os.path.join(os.path.dirname(ROOT), "shared", "landscapes"))
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--budgets", default="10,15,25,50,100,200")
    ap.add_argument("--kt-strategies", default=",".join(KT_STRATEGIES))
    ap.add_argument("--no-kernel-tuner", action="store_true",
                    help="replay kforge's strategies only: no Kernel Tuner install, no Kernel Tuner runs")
    ap.add_argument("--kforge-strategies", default="random,annealing,model")
    ap.add_argument("--default-strategy", default="model", help="the kforge strategy the verdict is about")
    ap.add_argument("--only", default="", help="landscape names (file names without .json.gz)")
    ap.add_argument("--prefix", action="store_true")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "search_replay"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    # The Kernel Tuner worker, run in bench/.venv by this script.
    ap.add_argument("--kt-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cache", help=argparse.SUPPRESS)
    ap.add_argument("--strategy", help=argparse.SUPPRESS)
    ap.add_argument("--budget", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.kt_worker:
        args.seeds_list = range(1, args.seeds + 1)
        return kt_worker(args)

    budgets = [int(b) for b in args.budgets.split(",")]
    for tool in (args.replay, args.kforge):
        if not os.path.exists(tool):
            raise SystemExit(f"{tool}: not built (cmake --build build)")
    os.makedirs(args.work, exist_ok=True)
    ctx = context(args.kforge, "search_replay")
    kt_strategies = [] if args.no_kernel_tuner else args.kt_strategies.split(",")
    py = venv_python() if kt_strategies else None
    ctx["kernel_tuner"] = subprocess.run([py, "-c", "import kernel_tuner; print(kernel_tuner.__version__)"],
                                         capture_output=True, text=True).stdout.strip() if py else None
    files = sorted(glob.glob(os.path.join(args.landscapes, "*.json.gz")))
    if args.only:
        files = [f for f in files if os.path.basename(f)[:-len(".json.gz")] in args.only.split(",")]
    if not files:
        raise SystemExit(f"{args.landscapes}: no *.json.gz landscapes")
    receipt = {"context": ctx, "seeds": args.seeds, "budgets": budgets, "prefix": args.prefix,
               "no_kernel_tuner": args.no_kernel_tuner,
               "default_strategy": args.default_strategy, "landscapes": {}, "verdict": {}}
    for path in files:
        name = os.path.basename(path)[:-len(".json.gz")]
        cache_json = os.path.join(args.work, name + ".cache.json")
        landscape = os.path.join(args.work, name + ".kforge.landscape.json")
        cache = load_cache(path)
        if not os.path.exists(cache_json):
            with open(cache_json, "w") as f:
                json.dump(cache, f)
        subprocess.run([sys.executable, os.path.join(args.landscapes, "to_kforge.py"), path, "-o", landscape],
                       check=True, capture_output=True)
        table = median_table(cache)
        land = {"configurations": len(table), "kforge": {}, "kernel_tuner": {}}
        for s, r in kforge_scores(args.replay, landscape, args.kforge_strategies.split(","), budgets, args.seeds,
                                  args.work, name):
            land["kforge"][s] = r
            print(f"{name} kforge {s}: {r['median']}", file=sys.stderr)
        for s in kt_strategies:
            land["kernel_tuner"][s] = kt_scores(py, name, cache_json, table, s, budgets, args.seeds, args.prefix,
                                                args.work)
            print(f"{name} KT {s}: {land['kernel_tuner'][s].get('median', land['kernel_tuner'][s].get('skipped'))}",
                  file=sys.stderr)
        ran = {s: r for s, r in land["kernel_tuner"].items() if "skipped" not in r}
        land["best_kt"] = {}
        for b in (budgets if ran else []):
            s = max(ran, key=lambda s: ran[s]["median"][str(b)])
            land["best_kt"][str(b)] = {"strategy": s, "fraction": ran[s]["median"][str(b)]}
        mine = land["kforge"].get(args.default_strategy)
        if mine and ran:
            receipt["verdict"][name] = {str(b): mine["median"][str(b)] >= land["best_kt"][str(b)]["fraction"]
                                        for b in budgets}
        receipt["landscapes"][name] = land
    finish(ctx)
    write_receipt(args.out, "search_replay", receipt, markdown(receipt, budgets))


if __name__ == "__main__":
    main()
