#!/usr/bin/env python3
"""Distributed sweeps (`kforge sweep --mpi`) on PoCL: plan throughput against
the number of ranks, and the idle time of each rank when rank 0 hands out
tasks one at a time against static `--shard I/N` shares of the same plan.

    bench/mpi_sweep.py [--build build] [--ranks 1 2] [--mpirun mpirun]

Throughput: a plan of equal small tasks, run with `mpirun -n R` for each R;
tasks per second over the whole command. Idle time: a plan whose tasks
differ in cost by over an order of magnitude, ordered so that index mod 2
puts both costly tasks in one shard; with 2 ranks, dynamic hand-out
(`--mpi`, each rank's idle = the hand-out window minus its busy time)
against 2 shard processes started together (each shard's idle = the
slowest shard's wall time minus its own). Every run starts from a fresh
database and fresh binary and PoCL kernel caches, so that no run compiles
less than another.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

BUDGET = {"strategy": "random", "seed": 3, "min_reps": 3, "max_reps": 3}

EQUAL_PLAN = {"schema_version": 1, "name": "equal", "budget": {**BUDGET, "max_evals": 3},
              "entries": [{"op": "softmax", "shapes": ["rows=4,cols=64", "rows=8,cols=64", "rows=4,cols=128"]},
                          {"op": "layernorm", "shapes": ["rows=4,cols=64", "rows=8,cols=64", "rows=4,cols=128"]}]}

# Two costly GEMMs at plan indices 0 and 2 (one shard of 2), four cheap tasks.
# A GEMM's cost is its time budget (its space is far larger than it can
# cover), so the costs do not depend on compile caches or the load.
COSTLY = {"max_evals": 0, "time_budget_s": 12}
UNEQUAL_PLAN = {"schema_version": 1, "name": "unequal", "budget": {**BUDGET, "max_evals": 2},
                "entries": [{"op": "gemm", "shapes": ["M=128,N=128,K=128"], "budget": COSTLY},
                            {"op": "softmax", "shapes": ["rows=4,cols=64"]},
                            {"op": "gemm", "shapes": ["M=128,N=128,K=64"], "budget": COSTLY},
                            {"op": "softmax", "shapes": ["rows=8,cols=64"]},
                            {"op": "layernorm", "shapes": ["rows=4,cols=64"]},
                            {"op": "layernorm", "shapes": ["rows=8,cols=64"]}]}


def env_for(tmp):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               POCL_CACHE_DIR=os.path.join(tmp, "pocl-cache"), KFORGE_LIBRARY_GEMM="forbid")
    return env


def write_plan(tmp, plan):
    path = os.path.join(tmp, plan["name"] + ".json")
    with open(path, "w") as f:
        json.dump(plan, f)
    return path


def mpi_run(a, kforge, plan, ranks):
    """One `mpirun -n RANKS kforge sweep PLAN --mpi` from scratch; its JSON and wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_plan(tmp, plan)
        # Unbound, as the shard processes are: Open MPI binds each of 2 ranks to a core by default.
        cmd = [a.mpirun, "--oversubscribe", "--bind-to", "none", "-n", str(ranks), kforge, "sweep", path, "--mpi", "--json",
               "--db", os.path.join(tmp, "mpi.db"), "--cache-dir", os.path.join(tmp, "cache")]
        t0 = time.monotonic()
        out = bench_env.run_json(cmd, env=env_for(tmp))
        return out, time.monotonic() - t0


def shard_run(kforge, plan, shards):
    """SHARDS `kforge sweep PLAN --shard I/N` processes started together; each one's wall time."""
    with tempfile.TemporaryDirectory() as tmp:
        path = write_plan(tmp, plan)
        env = env_for(tmp)
        procs, t0 = [], time.monotonic()
        for i in range(1, shards + 1):
            cmd = [kforge, "sweep", path, "--shard", f"{i}/{shards}", "--json", "--quiet",
                   "--db", os.path.join(tmp, f"shard{i}.db"), "--cache-dir", os.path.join(tmp, f"cache{i}")]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        walls, outs = [None] * shards, [None] * shards
        while any(w is None for w in walls):
            for i, p in enumerate(procs):
                if walls[i] is None and p.poll() is not None:
                    walls[i] = time.monotonic() - t0
            time.sleep(0.05)
        for i, p in enumerate(procs):
            out, err = p.communicate()
            if p.returncode != 0:
                raise SystemExit(f"shard {i + 1}: exit {p.returncode}: {err[-2000:]}")
            outs[i] = json.loads(out)
        return outs, walls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(bench_env.ROOT, "build"))
    ap.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    kforge = os.path.join(a.build, "kforge")
    ctx = bench_env.context(kforge, "mpi_sweep", {
        "mpirun": subprocess.run([a.mpirun, "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "note": f"{os.cpu_count()} cores shared by every rank (and by other jobs): no scaling is expected here"})

    throughput = []
    for r in a.ranks:
        out, wall = mpi_run(a, kforge, EQUAL_PLAN, r)
        n = len(out["tasks"])
        throughput.append({"ranks": r, "tasks": n, "wall_s": wall, "tasks_per_s": n / wall,
                           "per_rank": out["mpi"]["ranks"]})
        print(f"throughput: {r} ranks, {n} tasks in {wall:.1f} s", file=sys.stderr)

    dyn, dyn_wall = mpi_run(a, kforge, UNEQUAL_PLAN, 2)
    dynamic = {"wall_s": dyn_wall, "window_s": dyn["mpi"]["window_s"],
               "ranks": [{k: x[k] for k in ("rank", "tasks", "busy_s", "idle_s")} for x in dyn["mpi"]["ranks"]],
               "tasks": [{k: t[k] for k in ("index", "key", "rank", "time_s")} for t in dyn["tasks"]]}
    print(f"dynamic: {dyn_wall:.1f} s", file=sys.stderr)
    outs, walls = shard_run(kforge, UNEQUAL_PLAN, 2)
    static = {"wall_s": max(walls),
              "shards": [{"shard": i + 1, "tasks": len(o["tasks"]), "wall_s": w, "idle_s": max(walls) - w}
                         for i, (o, w) in enumerate(zip(outs, walls))],
              "tasks": [{k: t[k] for k in ("index", "key", "time_s")} for o in outs for t in o["tasks"]]}
    print(f"static: {max(walls):.1f} s", file=sys.stderr)
    bench_env.finish(ctx)

    md = ["# Distributed sweep: throughput by ranks, idle time dynamic vs static", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}, "
          f"{ctx['mpirun']}; PoCL, every rank on the one CPU device. {ctx['note']}.", "",
          f"Load average {ctx['load_average_at_start'][0]:.1f} at start, {ctx['load_average_at_end'][0]:.1f} at end.",
          "", "## Plan throughput (6 equal small tasks: softmax and layernorm, 3 candidates each)", "",
          "| ranks | tasks | wall s | tasks/s | tasks per rank |", "|---|---|---|---|---|"]
    for t in throughput:
        md.append(f"| {t['ranks']} | {t['tasks']} | {t['wall_s']:.1f} | {t['tasks_per_s']:.3f} | "
                  f"{' / '.join(str(x['tasks']) for x in t['per_rank'])} |")
    md += ["", "## Idle time per rank, 2 ranks (2 GEMMs with a 12 s time budget at plan indices 0 and 2, "
           "4 tasks of 2 candidates)", "",
           "| hand-out | wall s | rank / shard | tasks | busy s | idle s |", "|---|---|---|---|---|---|"]
    for r in dynamic["ranks"]:
        md.append(f"| dynamic (--mpi) | {dynamic['wall_s']:.1f} | rank {r['rank']} | {r['tasks']} | "
                  f"{r['busy_s']:.1f} | {r['idle_s']:.1f} |")
    for s in static["shards"]:
        md.append(f"| static (--shard {s['shard']}/2) | {static['wall_s']:.1f} | shard {s['shard']} | {s['tasks']} | "
                  f"{s['wall_s']:.1f} | {s['idle_s']:.1f} |")
    md += ["", "Dynamic idle: the hand-out window minus the rank's busy time (hand-out to report, summed). "
           "Static idle: the slowest shard's wall time minus the shard's own.", "",
           "Tasks (seconds, as each task's tuner timed it): dynamic " +
           ", ".join(f"{t['index']}@r{t['rank']} {t['time_s']:.1f}" for t in dynamic["tasks"]) +
           "; static " + ", ".join(f"{t['index']} {t['time_s']:.1f}" for t in static["tasks"]) + ".", "",
           f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "mpi_sweep", {"context": ctx, "throughput": throughput, "dynamic": dynamic,
                                                  "static": static}, "\n".join(md))


if __name__ == "__main__":
    main()
