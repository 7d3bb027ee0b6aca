#!/usr/bin/env python3
"""The soak: a sweep of many candidates with faults planted at random, its
tuner (or its MPI ranks) killed with SIGKILL at random moments and rerun
until the sweep ends on its own; then every stored result is checked.

    bench/soak.py [--kforge build/kforge] [--candidates 1000] [--kills 20] [--ranks 0|R]
                  [--seed 1] [--no-receipt]

The operator (`soak`, written into a temporary folder with its reference
library) has one tunable, ID, with one configuration per candidate; the seed
plants a fault in about a third of them: a crash (a write far outside any
allocation), a hang, a compile error, a wrong result, NaN, a slow but correct
kernel, and a write two elements past the output. One problem more has a
reference that never returns. The plan tunes every problem exhaustively.

Passes when the database holds a result for every (problem,
configuration) of every problem whose reference returns: nothing lost (the
schema keeps one row per device, template, problem and configuration, so
none can be stored twice); each with the status its fault must give and a reason
that names the fault (every correct one `ok`); each problem's winner a
fault-free configuration; and the problem with the hanging reference
reported as a failed task naming the reference's library and symbol. Exit
status 0 when it passes, 1 when not (each mismatch printed), 2 for bad
arguments. `--ranks R` runs `mpirun -n R kforge sweep --mpi` and kills a
random rank instead of the tuner.

Without `--no-receipt` a receipt goes to bench/receipts/soak-*.{json,md}.
"""
import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

# Planted fault -> (the status it must be stored with, a word its reason must hold).
FAULTS = {
    "none": ("ok", ""),
    "crash": ("crash", "signal"),
    "hang": ("timeout", "no result within"),
    "compile_error": ("compile_error", "planted"),
    "wrong": ("wrong_result", "first bad index"),
    "nan": ("wrong_result", "first bad index"),
    "slow": ("ok", ""),
    "writes_past": ("wrong_result", "written past its end"),
}
FAULT_CODE = {name: i for i, name in enumerate(FAULTS)}
# Share of the candidates given each fault; the rest are correct.
FAULT_SHARE = {"crash": 0.05, "hang": 0.02, "compile_error": 0.05, "wrong": 0.06, "nan": 0.05, "slow": 0.05,
               "writes_past": 0.05}
HANGING_REFERENCE_N = 777
BLOCK = 64

KERNEL = r"""// The soak's kernel: y = 2x + 1, with the fault FAULT planted (bench/soak.py).
%(faults)s
KF_KERNEL void KF_KERNEL_NAME(const int n, KF_GLOBAL const kf_in_t* KF_RESTRICT x, KF_GLOBAL float* KF_RESTRICT y) {
  const int i = KF_BLOCK_X * %(block)d + KF_THREAD_X;
  if (i >= n) return;
  float v = 2.0f * KF_LOAD_IN(x, i) + 1.0f;
#if FAULT == %(crash)d
  y[i + (1L << 40)] = v;
#elif FAULT == %(hang)d
  while (((volatile KF_GLOBAL const kf_in_t*)x)[0] != (kf_in_t)1000.0f) {
  }
#elif FAULT == %(compile_error)d
#error "planted compile error"
#elif FAULT == %(wrong)d
  v += 0.5f;
#elif FAULT == %(nan)d
  v = NAN;
#elif FAULT == %(slow)d
  float s = 0.0f;
  for (int r = 0; r < 4000; ++r) s += KF_LOAD_IN(x, (i + r) %% n);
  v += s * 0.0f;
#elif FAULT == %(writes_past)d
  if (i == n - 1) {
    y[n] = v;
    y[n + 1] = v;
  }
#endif
  y[i] = v;
}
"""

REFERENCE = r"""/* The soak's reference: y = 2x + 1; never returns for n == %(hang_n)d. */
#include "kforge_reference.h"

#include <string.h>

static kforge_ref_arg* find(kforge_ref_problem* p, const char* name) {
  for (int i = 0; i < p->nargs; ++i) {
    if (strcmp(p->args[i].name, name) == 0) return &p->args[i];
  }
  return 0;
}

int soak_reference(kforge_ref_problem* p) {
  if (p->abi_version != KFORGE_REFERENCE_ABI_VERSION) return 1;
  kforge_ref_arg *x = find(p, "x"), *y = find(p, "y");
  if (!x || !y || x->count != y->count) return 2;
  volatile int forever = x->count == %(hang_n)d;
  while (forever) {
  }
  for (uint64_t i = 0; i < y->count; ++i) y->data[i] = 2.0 * x->data[i] + 1.0;
  return 0;
}
"""


def plant_faults(candidates, seed):
    """ID -> fault name: each fault on its share of the IDs, at random."""
    rng = random.Random(seed)
    ids = list(range(candidates))
    rng.shuffle(ids)
    faults, at = {}, 0
    for name, share in FAULT_SHARE.items():
        count = max(1, round(share * candidates))
        for i in ids[at:at + count]:
            faults[i] = name
        at += count
    for i in ids[at:]:
        faults[i] = "none"
    return faults


def fault_table(faults):
    """FAULT as a function of ID, one #if per planted fault."""
    lines = ["#define FAULT 0"]
    for name, code in FAULT_CODE.items():
        ids = [i for i, f in sorted(faults.items()) if f == name and name != "none"]
        if ids:
            lines += ["#if " + " || ".join(f"ID == {i}" for i in ids), "#undef FAULT", f"#define FAULT {code}",
                      "#endif"]
    return "\n".join(lines) + "\n"


def write_operator(folder, candidates, faults):
    """The soak operator's template folder, its reference library built."""
    os.makedirs(folder)
    with open(os.path.join(folder, "operator.json"), "w") as f:
        json.dump({"schema_version": 1, "name": "soak", "description": "y = 2x + 1, faults planted per ID",
                   "dims": [{"name": "n"}], "default_problem": {"n": 1000},
                   "arguments": [
                       {"name": "n", "type": "i32", "value": "n"},
                       {"name": "x", "type": "buffer", "role": "in", "dtype": "problem", "count": "n",
                        "init": {"kind": "uniform", "low": -1, "high": 1}},
                       {"name": "y", "type": "buffer", "role": "out", "dtype": "f32", "count": "n",
                        "tolerance": {"abs": 1e-6, "rel": 1e-6}}],
                   "flops": "2 * n", "bytes": "n * dtype_bytes + 4 * n",
                   "reference": {"library": "soak_reference.so", "symbol": "soak_reference"}}, f, indent=1)
    with open(os.path.join(folder, "manifest.json"), "w") as f:
        json.dump({"schema_version": 1, "name": "soak_planted", "operator": "soak",
                   "description": "y = 2x + 1 with a fault planted in some IDs (bench/soak.py)",
                   "source": "soak.c", "kernel": "soak_planted", "targets": ["opencl", "cuda", "hip"],
                   "dtypes": ["f32"], "layouts": ["NN"],
                   "parameters": [{"name": "ID", "values": list(range(candidates)), "default": 0,
                                   "doc": "the candidate; soak.c plants its fault"}],
                   "constraints": [], "envelope": [],
                   "launch": {"block": [str(BLOCK), "1", "1"], "grid": [f"ceil_div(n, {BLOCK})", "1", "1"]}},
                  f, indent=1)
    with open(os.path.join(folder, "soak.c"), "w") as f:
        f.write(KERNEL % dict(FAULT_CODE, block=BLOCK, faults=fault_table(faults)))
    ref_c = os.path.join(folder, "soak_reference.c")
    with open(ref_c, "w") as f:
        f.write(REFERENCE % {"hang_n": HANGING_REFERENCE_N})
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-I", os.path.join(bench_env.ROOT, "runtime", "libraries"),
                    "-o", os.path.join(folder, "soak_reference.so"), ref_c], check=True)


def write_plan(path, problems):
    with open(path, "w") as f:
        json.dump({"schema_version": 1, "name": "soak",
                   "budget": {"strategy": "exhaustive", "min_reps": 2, "max_reps": 2},
                   "entries": [{"op": "soak", "shapes": [f"n={n}" for n in problems]}]}, f)


def sweep_command(a, kforge, folder, plan, db):
    cmd = [kforge, "sweep", plan, "--template", folder, "--db", db, "--json", "--launch-timeout", str(a.launch_timeout),
           "--compile-timeout", "60", "--reference-timeout", str(a.reference_timeout),
           "--cache-dir", os.path.join(os.path.dirname(db), "binaries")]
    if a.ranks:
        cmd = [a.mpirun, "--oversubscribe", "--bind-to", "none", "-n", str(a.ranks)] + cmd + ["--mpi"]
    return cmd


def children(pid):
    """The processes whose parent is pid."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except (OSError, IndexError, ValueError):
            pass
    return out


def kill_target(a, proc, rng):
    """The tuner itself, or with --ranks a random rank of the job."""
    if not a.ranks:
        return proc.pid, "tuner"
    ranks = [p for p in children(proc.pid) if is_sweep_rank(p)]
    if not ranks:
        return proc.pid, "mpirun"
    return rng.choice(ranks), "rank"


def is_sweep_rank(pid):
    """Whether pid runs `kforge sweep` (a rank, not mpirun's helpers)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"sweep" in f.read()
    except OSError:
        return False


def run_round(a, cmd, env, rng, kill):
    """One run of the sweep; with kill, a SIGKILL at a random moment. Returns
    (killed what or None, exit status, parsed JSON or None, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    killed = None
    if kill:
        try:
            proc.wait(timeout=rng.uniform(a.kill_after[0], a.kill_after[1]))
        except subprocess.TimeoutExpired:
            pid, what = kill_target(a, proc, rng)
            os.kill(pid, signal.SIGKILL)
            killed = what
    try:
        out, _ = proc.communicate(timeout=a.round_timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise SystemExit(f"soak: a round ran past {a.round_timeout} s: {' '.join(cmd)}")
    if killed:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # what a killed rank leaves behind
        except ProcessLookupError:
            pass
    try:
        report = json.loads(out) if out.strip() else None
    except json.JSONDecodeError:
        report = None
    return killed, proc.returncode, report, time.monotonic() - start


def stored_results(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT p.key, r.config, r.status, r.reason FROM results r "
                           "JOIN problems p ON p.id = r.problem_id").fetchall(), \
            con.execute("SELECT p.key, w.config FROM winners w JOIN problems p ON p.id = w.problem_id").fetchall()
    finally:
        con.close()


def check(db, problems, faults, report):
    """Every mismatch between the database (and the last report) and what the
    planted faults must give, as lines; empty when the soak passes."""
    rows, winners = stored_results(db)
    errors, seen = [], {}
    for key, config, status, reason in rows:
        seen.setdefault((key, config), []).append((status, reason))
    good = [n for n in problems if n != HANGING_REFERENCE_N]
    keys = {}
    for key, _ in seen:
        n = int(key.split("n=")[1].split("/")[0])
        keys[n] = key
    for n in problems:
        if n == HANGING_REFERENCE_N:
            if n in keys:
                errors.append(f"n={n}: the problem whose reference hangs has stored results")
            continue
        if n not in keys:
            errors.append(f"n={n}: no results stored")
            continue
        for i, fault in faults.items():
            config = f"ID{i}"
            got = seen.get((keys[n], config), [])
            want_status, want_word = FAULTS[fault]
            if len(got) != 1:
                errors.append(f"n={n} {config} ({fault}): {len(got)} results stored, expected 1")
                continue
            status, reason = got[0]
            if status != want_status or want_word not in reason:
                errors.append(f"n={n} {config} ({fault}): stored {status} ({reason[:160]!r}), "
                              f"expected {want_status} naming {want_word!r}")
    extra = [k for k in seen if not k[1].startswith("ID") or int(k[1][2:]) not in faults]
    errors += [f"{k}: a result for no planted configuration" for k in extra]
    for key, config in winners:
        if faults.get(int(config[2:]), "?") not in ("none", "slow"):
            errors.append(f"{key}: the winner {config} has the fault {faults.get(int(config[2:]))}")
    if len({k for k, _ in winners}) != len(good):
        errors.append(f"{len(winners)} winners stored for {len(good)} problems")
    errors += check_report(report, problems)
    return errors


def check_report(report, problems):
    if report is None:
        return ["the last round printed no JSON report"]
    errors = []
    for t in report["tasks"]:
        hanging = f"n={HANGING_REFERENCE_N}/" in t["key"]
        if hanging and (t["state"] != "error" or "soak_reference" not in t.get("error", "")):
            errors.append(f"{t['key']}: state {t['state']}, error {t.get('error', '')!r}: expected an error "
                          "naming the reference's library and symbol")
        if not hanging and t["state"] not in ("ran", "skipped"):
            errors.append(f"{t['key']}: state {t['state']} ({t.get('error', '')})")
    if len(report["tasks"]) != len(problems):
        errors.append(f"the report lists {len(report['tasks'])} tasks, the plan {len(problems)}")
    return errors


def soak(a, kforge, tmp, env):
    """Runs the rounds; returns (rounds, the last report, the problems, the faults)."""
    per_problem = a.candidates // len(a.problems)
    faults = plant_faults(per_problem, a.seed)
    folder, plan, db = os.path.join(tmp, "soak"), os.path.join(tmp, "plan.json"), os.path.join(tmp, "soak.db")
    write_operator(folder, per_problem, faults)
    problems = a.problems + [HANGING_REFERENCE_N]
    write_plan(plan, problems)
    cmd = sweep_command(a, kforge, folder, plan, db)
    rng = random.Random(a.seed)
    rounds, report = [], None
    for r in range(a.kills + a.max_final_rounds):
        killed, rc, report, seconds = run_round(a, cmd, env, rng, kill=r < a.kills)
        rounds.append({"round": r + 1, "killed": killed, "exit_status": rc, "seconds": round(seconds, 1)})
        print(f"soak: round {r + 1}: {'killed the ' + killed if killed else 'exit ' + str(rc)} after "
              f"{seconds:.1f} s", file=sys.stderr)
        if not killed and report is not None:
            break
    return rounds, report, problems, faults, db


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(bench_env.ROOT, "build", "kforge"))
    ap.add_argument("--candidates", type=int, default=1000, help="candidates in all, split among the problems")
    ap.add_argument("--problems", type=int, nargs="+", default=[1000, 4093], help="n of each problem to tune")
    ap.add_argument("--kills", type=int, default=20, help="rounds ended by a SIGKILL")
    ap.add_argument("--kill-after", type=float, nargs=2, default=[2.0, 30.0], metavar=("MIN_S", "MAX_S"))
    ap.add_argument("--max-final-rounds", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=0, help="0: one tuner process; R: mpirun -n R ... --mpi")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--launch-timeout", type=float, default=2)
    ap.add_argument("--reference-timeout", type=float, default=3)
    ap.add_argument("--round-timeout", type=float, default=3600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-receipt", action="store_true")
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    if a.candidates < len(a.problems) * len(FAULT_SHARE) or HANGING_REFERENCE_N in a.problems:
        ap.error(f"--candidates must give each problem at least {len(FAULT_SHARE)}, and no problem may be "
                 f"n={HANGING_REFERENCE_N} (the hanging reference's)")
    kforge = a.kforge
    ctx = None if a.no_receipt else bench_env.context(kforge, "soak")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kforge-soak-") as tmp:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   POCL_CACHE_DIR=os.path.join(tmp, "pocl-cache"))
        rounds, report, problems, faults, db = soak(a, kforge, tmp, env)
        errors = check(db, problems, faults, report)
        stored = len(stored_results(db)[0])
    wall = time.monotonic() - start
    for e in errors:
        print("soak: " + e, file=sys.stderr)
    counts = {f: sum(1 for x in faults.values() if x == f) for f in FAULTS}
    verdict = "passed" if not errors else f"FAILED ({len(errors)} mismatches)"
    print(f"soak: {verdict}: {stored} results for {len(problems) - 1} problems x {len(faults)} candidates, "
          f"{sum(1 for r in rounds if r['killed'])} kills, {len(rounds)} rounds, {wall:.0f} s", file=sys.stderr)
    if ctx:
        write_soak_receipt(a, ctx, rounds, counts, stored, errors, wall)
    return 0 if not errors else 1


def write_soak_receipt(a, ctx, rounds, counts, stored, errors, wall):
    bench_env.finish(ctx)
    kills = [r for r in rounds if r["killed"]]
    md = ["# Soak: planted faults and SIGKILLs, resumed until done", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}; PoCL. "
          f"Load average {ctx['load_average_at_start'][0]:.1f} at start, {ctx['load_average_at_end'][0]:.1f} at end.",
          "", f"{'mpirun -n ' + str(a.ranks) + ' (a random rank killed)' if a.ranks else 'one tuner process'}; "
          f"problems n={', '.join(map(str, a.problems))} and n={HANGING_REFERENCE_N} (its reference hangs), "
          f"{a.candidates // len(a.problems)} candidates each, exhaustive; seed {a.seed}.", "",
          "| planted fault | candidates per problem | must be stored as |", "|---|---|---|"]
    md += [f"| {f} | {n} | {FAULTS[f][0]} |" for f, n in counts.items()]
    md += ["", f"Rounds: {len(rounds)}, {len(kills)} ended by a SIGKILL "
           f"(lasting {', '.join(str(r['seconds']) for r in kills) or '-'} s with the cleanup after the kill); "
           f"the last exited {rounds[-1]['exit_status']}. "
           f"Wall time {wall:.0f} s.", "",
           f"Verdict: {'passed' if not errors else 'FAILED'}: {stored} results stored, "
           f"{len(errors)} mismatches." + (" First: " + errors[0] if errors else ""), "",
           f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "soak", {"context": ctx, "rounds": rounds, "faults": counts, "stored": stored,
                                            "errors": errors, "wall_s": wall}, "\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
