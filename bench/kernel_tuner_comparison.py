#!/usr/bin/env python3
"""Tuning throughput of `kforge tune` against Kernel Tuner on the same kernel,
parameter space and problem, in the same run, on one OpenCL device (PoCL).

The space is the built-in GEMM template gemm_simt_tiled with fewer values per
parameter (a user-template copy, bench/restricted_template.py), so that both
tools run every valid configuration of it (kforge: --strategy exhaustive;
Kernel Tuner: brute_force). Kernel Tuner gets the source kforge's generator
builds: the problem-type defines (KF_KERNEL_NAME, KF_DTYPE_F32, KF_TRANS_*,
KF_BIAS, KF_ACTIVATION), templates/prelude/opencl.h and epilogue.h, and the
template, with the tunables as tune_params, the manifest's launch geometry
(block BN/TN x BM/TM, grid ceil(N/BN) x ceil(M/BM)) and constraints, and an
answer check against numpy (the same alpha 1.5, beta 0 as kforge's workload).

kforge runs twice: with an empty binary cache (cold) and again with that cache
and a fresh database (warm); Kernel Tuner, which has no binary cache of its
own, runs twice as well. Each tool gets its own empty PoCL kernel cache
(POCL_CACHE_DIR), kept from its cold run to its warm run, so "cold" means every
candidate compiles and "warm" means every disk cache the tool benefits from is
filled.
Kernel Tuner then runs a third time (PoCL cache warm) with its benchmark
loop's poll replaced by a wait on the launch's event, as kforge waits, to
show whether its winner changes when no poller shares the cores; the ratios
are against its stock runs.
Last, the three fastest configurations of each tool's warm run are timed
again with pyopencl's profiling events, waited for on the event and polled
as Kernel Tuner's benchmark loop polls, which shows where the tools' times
and winners part (docs/measurement.md, "Benchmarks against other tuners").
Kernel Tuner needs pyopencl and kernel_tuner; the script installs them into
bench/.venv (pip, --system-site-packages) on first use and runs Kernel Tuner
there.

With --cpus N every process of the run (kforge, its worker and code
generators, Kernel Tuner, PoCL's device threads through POCL_MAX_PTHREAD_COUNT)
is held to the first N CPUs this process may use, so that one host measures
how the ratios change with the cores (docs/measurement.md, "Cores: the cold
run's bound").

    bench/kernel_tuner_comparison.py [--kforge build/kforge] [--size 512] [--cpus N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, run_json, write_receipt  # noqa: E402
import restricted_template  # noqa: E402

VENV = os.path.join(ROOT, "bench", ".venv")
TEMPLATE = "gemm/simt_tiled"
NAME = "gemm_simt_tiled_bench"
# 36 valid configurations at 4096 threads / 512 KiB local memory.
SPACE = {"BM": [32, 64], "BN": [32, 64], "BK": [8, 16], "TM": [2, 4], "TN": [2, 4], "VW": [1, 4], "PAD": [0]}


def venv_python():
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", VENV], check=True)
    ok = subprocess.run([py, "-c", "import pyopencl, kernel_tuner"], capture_output=True).returncode == 0
    if not ok:
        subprocess.run([py, "-m", "pip", "install", "-q", "pyopencl", "kernel_tuner"], check=True)
    return py


def kernel_source(manifest, tpl_dir, params=None):
    """The source kforge's generator builds for the problem type (f32, NN, no
    epilogue), with `params` as defines where given (Kernel Tuner adds its own)."""
    # kforge's prelude_text("opencl"): the backend's file, then the shared epilogue.
    prelude = ""
    for name in ("opencl.h", "epilogue.h"):
        with open(os.path.join(ROOT, "templates", "prelude", name)) as f:
            prelude += f.read()
    with open(os.path.join(tpl_dir, manifest["source"])) as f:
        body = f.read()
    defines = "".join(f"#define {k} {v}\n" for k, v in (params or {}).items())
    return ("#define KF_KERNEL_NAME gemm_simt_tiled\n#define KF_DTYPE_F32 1\n#define KF_DTYPE_BYTES 4\n"
            "#define KF_TRANS_A 0\n#define KF_TRANS_B 0\n#define KF_BIAS 0\n#define KF_ACTIVATION 0\n" +
            defines + prelude + "\n" + body)


def waiting_run(args):
    """Runs inside bench/.venv: times each configuration of args.configs with
    pyopencl's profiling events, 7 launches waited for on the event (as
    kforge waits) and 7 whose completion is polled with 1 us sleeps between
    polls (as Kernel Tuner's benchmark loop waits); prints JSON. On a CPU
    device the poller takes a core from the kernel's threads."""
    import numpy as np
    import pyopencl as cl

    with open(args.manifest) as f:
        manifest = json.load(f)
    tpl_dir = os.path.dirname(args.manifest)
    n = args.size
    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(1)
    mf = cl.mem_flags
    a = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=rng.uniform(-1, 1, (n, n)).astype(np.float32))
    b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=rng.uniform(-1, 1, (n, n)).astype(np.float32))
    c = cl.Buffer(ctx, mf.READ_WRITE, n * n * 4)
    bias = cl.Buffer(ctx, mf.READ_WRITE, n * 4)
    out = []
    for name in json.loads(args.configs):
        params = {k: int(v) for k, v in (re.match(r"([A-Za-z]+)(-?\d+)$", part).groups() for part in name.split("_"))}
        kernel = cl.Kernel(cl.Program(ctx, kernel_source(manifest, tpl_dir, params)).build(options="-cl-std=CL1.2"),
                           "gemm_simt_tiled")
        kernel.set_args(np.int32(n), np.int32(n), np.int32(n), np.float32(1.5), a, b, np.float32(0), c, bias)
        local = (params["BN"] // params["TN"], params["BM"] // params["TM"])
        glob = (-(-n // params["BN"]) * local[0], -(-n // params["BM"]) * local[1])
        cl.enqueue_nd_range_kernel(q, kernel, glob, local).wait()  # code generation, warm-up

        def ms(event):
            return (event.profile.end - event.profile.start) * 1e-6

        waited, polled = [], []
        for _ in range(7):
            e = cl.enqueue_nd_range_kernel(q, kernel, glob, local)
            e.wait()
            waited.append(ms(e))
        for _ in range(7):
            q.finish()
            e = cl.enqueue_nd_range_kernel(q, kernel, glob, local)
            while e.get_info(cl.event_info.COMMAND_EXECUTION_STATUS) != 0:
                time.sleep(1e-6)
            q.finish()
            polled.append(ms(e))
        out.append({"config": name, "waited_median_ms": float(np.median(waited)),
                    "polled_median_ms": float(np.median(polled)), "polled_mean_ms": float(np.mean(polled))})
    print(json.dumps(out))


def kernel_tuner_run(args):
    """Runs inside bench/.venv: tunes the space with Kernel Tuner, prints JSON."""
    import numpy as np
    import kernel_tuner
    from importlib.metadata import version

    with open(args.manifest) as f:
        manifest = json.load(f)
    limits = json.loads(args.limits)
    tpl_dir = os.path.dirname(args.manifest)
    source = kernel_source(manifest, tpl_dir)
    n = args.size
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    c = np.full((n, n), np.nan, dtype=np.float32)
    bias = np.full(n, np.nan, dtype=np.float32)
    alpha, beta = np.float32(1.5), np.float32(0.0)
    expected = (alpha * (a.astype(np.float64) @ b.astype(np.float64))).astype(np.float32)
    arguments = [np.int32(n), np.int32(n), np.int32(n), alpha, a, b, beta, c, bias]
    answer = [None, None, None, None, None, None, None, expected, None]

    def verify(ans, res, atol=None):
        return bool(np.allclose(res[7], ans[7], rtol=1e-3, atol=1e-3 * np.sqrt(n)))

    tune_params = {p["name"]: p["values"] for p in manifest["parameters"]}
    # The block is derived from the tile parameters (manifest launch.block).
    tune_params["block_size_x"] = sorted({bn // tn for bn in tune_params["BN"] for tn in tune_params["TN"]})
    tune_params["block_size_y"] = sorted({bm // tm for bm in tune_params["BM"] for tm in tune_params["TM"]})
    exprs = [restricted_template.python_expression(c, limits) for c in manifest["constraints"]]

    def restrict(p):
        env = dict(p)
        return (env["block_size_x"] == env["BN"] // env["TN"] and env["block_size_y"] == env["BM"] // env["TM"] and
                all(eval(e, {}, env) for e in exprs))  # noqa: S307 (the repository's own manifest)

    if args.blocking_wait:
        # Kernel Tuner's benchmark loop polls kernel_finished() with 1 us
        # sleeps; here the first poll waits on the launch's event instead.
        from kernel_tuner.backends.opencl import OpenCLFunctions

        def finished_after_wait(self):
            self.event.wait()
            return True
        OpenCLFunctions.kernel_finished = finished_after_wait

    t0 = time.perf_counter()
    results, env = kernel_tuner.tune_kernel(
        "gemm_simt_tiled", source, (n, n), arguments, tune_params, lang="OpenCL",
        grid_div_x=["BN"], grid_div_y=["BM"], restrictions=restrict, answer=answer, verify=verify,
        compiler_options=["-cl-std=CL1.2"], strategy="brute_force", device=0, platform=0, quiet=True,
        verbose=False)
    wall = time.perf_counter() - t0
    ok = [r for r in results if isinstance(r.get("time"), float)]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    split = {}
    for key in ("compile_time", "verification_time", "benchmark_time", "framework_time", "strategy_time"):
        split[key.replace("_time", "")] = sum(r.get(key, 0.0) or 0.0 for r in results) / 1000.0
    cfg = (lambda r: {k: r[k] for k in manifest_names(manifest)})
    print(json.dumps({
        "kernel_tuner_version": version("kernel_tuner"),
        "pyopencl_version": version("pyopencl"),
        "iterations": env.get("iterations"),
        "candidates": len(results),
        "ok": len(ok),
        "wall_s": wall,
        "time_s": split,
        "winner": {"config": restricted_template.canonical_name(cfg(best)), "median_ms": best["time"]} if best else None,
        "results": [{"config": restricted_template.canonical_name(cfg(r)),
                     "time_ms": r["time"] if isinstance(r.get("time"), float) else None} for r in results],
    }))


def manifest_names(manifest):
    return [p["name"] for p in manifest["parameters"]]


def kforge_run(kforge, tpl_dir, size, db, cache, env):
    cmd = [kforge, "tune", "--op", "gemm", "--shape", f"M={size},N={size},K={size}", "--dtype", "f32", "--layout",
           "NN", "--template", tpl_dir, "--only-template", NAME, "--strategy", "exhaustive", "--db", db,
           "--cache-dir", cache, "--json"]
    t0 = time.perf_counter()
    r = run_json(cmd, env=env)
    wall = time.perf_counter() - t0
    t = r["time_s"]
    shown = run_json([kforge, "show", "--results", "--json", "--db", db], env=env)
    return {
        "results": [{"config": x["config"], "median_ms": x["median_ms"] if x["status"] == "ok" else None}
                    for x in shown["results"] if x["template"] == NAME],
        "command": " ".join(cmd),
        "candidates": r["evaluated_now"],
        "failed": r["failed"],
        "cache_hits": r["cache_hits"],
        "wall_s": wall,
        "time_s": {**t, "overhead": t["total"] - t["compile"] - t["validate"] - t["measure"] - t.get("finalists", 0)},
        "retimings": r.get("retimings"),
        "retiming_note": r.get("retiming_note", ""),
        "candidates_per_s": r["evaluated_now"] / wall,
        "winner": {"config": r["winner"]["config"], "median_ms": r["winner"]["median_ms"]} if r["winner"] else None,
        # Re-timed interleaved before the winner was declared (docs/measurement.md, "Finalists").
        "finalists": [{"config": f["config"], "search_median_ms": f["search_median_ms"],
                       "interleaved_median_ms": f["interleaved_median_ms"]} for f in r.get("finalists", [])],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--device", default="opencl:0")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    ap.add_argument("--cpus", type=int, help="hold every process of the run to the first N usable CPUs")
    ap.add_argument("--kernel-tuner-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--manifest", help=argparse.SUPPRESS)
    ap.add_argument("--limits", help=argparse.SUPPRESS)
    ap.add_argument("--blocking-wait", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--waiting-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--configs", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.kernel_tuner_only:
        return kernel_tuner_run(args)
    if args.waiting_only:
        return waiting_run(args)

    kforge = os.path.abspath(args.kforge)
    py = venv_python()
    if args.cpus:
        usable = sorted(os.sched_getaffinity(0))
        if not 1 <= args.cpus <= len(usable):
            sys.exit(f"kernel_tuner_comparison: --cpus {args.cpus}: this process may use {len(usable)} CPUs")
        # Inherited by every child; PoCL sizes its device's thread pool from the
        # online CPUs, not the affinity, so it is told.
        os.sched_setaffinity(0, usable[:args.cpus])
        os.environ["POCL_MAX_PTHREAD_COUNT"] = str(args.cpus)
    ctx = context(kforge, "kernel_tuner_comparison", {"size": args.size, "space": SPACE,
                                                       "cpus": sorted(os.sched_getaffinity(0))})
    limits = restricted_template.device_limits(ctx["devices"], args.device)
    with tempfile.TemporaryDirectory() as tmp:
        tpl_dir, manifest = restricted_template.write(TEMPLATE, NAME, SPACE, tmp)
        space = restricted_template.valid_configs(manifest, limits)
        cache = os.path.join(tmp, "cache")
        # Each tool gets its own empty PoCL kernel cache, kept from its cold run to its warm run.
        kf_env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl-kforge"))
        kt_env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl-kernel-tuner"))
        cold = kforge_run(kforge, tpl_dir, args.size, os.path.join(tmp, "cold.db"), cache, kf_env)
        print(f"kforge cold: {cold['candidates']} in {cold['wall_s']:.1f} s", file=sys.stderr)
        warm = kforge_run(kforge, tpl_dir, args.size, os.path.join(tmp, "warm.db"), cache, kf_env)
        print(f"kforge warm: {warm['candidates']} in {warm['wall_s']:.1f} s", file=sys.stderr)
        kt_cmd = [py, os.path.abspath(__file__), "--kernel-tuner-only", "--size", str(args.size), "--manifest",
                  os.path.join(tpl_dir, "manifest.json"), "--limits", json.dumps(limits)]
        kts = []
        for label in ("cold", "warm"):
            kt = run_json(kt_cmd, env=kt_env)
            kt["candidates_per_s"] = kt["candidates"] / kt["wall_s"]
            kts.append(kt)
            print(f"Kernel Tuner {label}: {kt['candidates']} in {kt['wall_s']:.1f} s", file=sys.stderr)
        kt, kt_warm = kts
        # Kernel Tuner again (PoCL cache warm) waiting for each launch on its
        # event: does its winner change when no poller shares the cores?
        kt_blocking = run_json(kt_cmd + ["--blocking-wait"], env=kt_env)
        kt_blocking["candidates_per_s"] = kt_blocking["candidates"] / kt_blocking["wall_s"]
        print(f"Kernel Tuner, blocking wait: {kt_blocking['candidates']} in {kt_blocking['wall_s']:.1f} s, "
              f"winner {(kt_blocking['winner'] or {}).get('config')}", file=sys.stderr)
        # Why the tools' times differ: the same kernels timed by events, waited
        # for as kforge waits and polled as Kernel Tuner polls.
        compared = []
        for run in (warm, kt_warm):
            for x in sorted((x for x in run["results"] if x.get("median_ms", x.get("time_ms"))),
                            key=lambda x: x.get("median_ms", x.get("time_ms")))[:3]:
                if x["config"] not in compared:
                    compared.append(x["config"])
        waiting = run_json([py, os.path.abspath(__file__), "--waiting-only", "--size", str(args.size), "--manifest",
                            os.path.join(tpl_dir, "manifest.json"), "--configs", json.dumps(compared)],
                           env=dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl-waiting")))
    finish(ctx)
    ctx["pocl_kernel_cache"] = "one empty POCL_CACHE_DIR per tool, kept from its cold run to its warm run"
    ctx["kernel_tuner_version"] = kt["kernel_tuner_version"]
    ctx["pyopencl_version"] = kt["pyopencl_version"]
    receipt = {
        "context": ctx,
        "valid_configurations": len(space),
        "kforge_cold": cold,
        "kforge_warm": warm,
        "kernel_tuner": kt,
        "kernel_tuner_warm": kt_warm,
        "kernel_tuner_blocking_wait": kt_blocking,
        "ratio_cold": cold["candidates_per_s"] / kt["candidates_per_s"],
        "ratio_warm": warm["candidates_per_s"] / kt_warm["candidates_per_s"],
        "kernel_tuner_time_of_kforge_winner_ms": {
            label: {x["config"]: x["time_ms"] for x in kt_run["results"]}.get((k["winner"] or {}).get("config"))
            for label, k, kt_run in (("cold", cold, kt), ("warm", warm, kt_warm))},
        "kforge_median_of_kernel_tuner_winner_ms": {
            label: {x["config"]: x["median_ms"] for x in k["results"]}.get((kt_run["winner"] or {}).get("config"))
            for label, k, kt_run in (("cold", cold, kt), ("warm", warm, kt_warm))},
        "same_winner_warm": bool(warm["winner"] and kt_warm["winner"] and
                                 warm["winner"]["config"] == kt_warm["winner"]["config"]),
        "same_winner": bool(cold["winner"] and kt["winner"] and cold["winner"]["config"] == kt["winner"]["config"]),
        # Kernel Tuner waiting on the event names one of kforge's two winners.
        "same_winner_blocking_wait": bool(kt_blocking["winner"] and kt_blocking["winner"]["config"] in
                                          {(k["winner"] or {}).get("config") for k in (cold, warm)}),
        "waiting": waiting,
    }
    write_receipt(args.out, "kernel_tuner_comparison", receipt, markdown(receipt))


def markdown(r):
    c = r["context"]
    kt = r["kernel_tuner"]
    lines = [
        f"# kforge vs Kernel Tuner: GEMM {c['size']}^3 f32 NN, {r['valid_configurations']} configurations",
        "",
        f"{c['date']}, kforge {c['git_revision']}, Kernel Tuner {kt['kernel_tuner_version']} (pyopencl "
        f"{kt['pyopencl_version']}), device {c['devices'][0]['name']} ({c['devices'][0]['runtime_version']}), "
        f"CPU {c['cpu']} x{c['cpu_count']}"
        f"{'' if len(c.get('cpus', [])) in (0, c['cpu_count']) else ', the run held to CPUs ' + str(c['cpus'])}"
        f", load average {c['load_average_at_start'][0]:.1f} at start, "
        f"{c['load_average_at_end'][0]:.1f} at end (a shared machine: ratios within this run are what count). "
        f"Space: {json.dumps(c['space'])}.",
        "",
        "| tool | candidates | wall s | cand/s | compile s | validate s | measure s | overhead s | cache hits | winner | winner ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, k in (("kforge, binary cache cold", r["kforge_cold"]), ("kforge, binary cache warm", r["kforge_warm"])):
        t = k["time_s"]
        w = k["winner"] or {}
        lines.append(f"| {label} | {k['candidates']} | {k['wall_s']:.1f} | {k['candidates_per_s']:.2f} | "
                     f"{t['compile']:.1f} | {t['validate']:.1f} | {t['measure'] + t.get('finalists', 0):.1f} | "
                     f"{k['wall_s'] - t['compile'] - t['validate'] - t['measure'] - t.get('finalists', 0):.1f} | "
                     f"{k['cache_hits']} | "
                     f"{w.get('config', '-')} | {w.get('median_ms', 0):.3f} |")
    kt_runs = [("cold", r["kernel_tuner"]), ("PoCL cache warm", r["kernel_tuner_warm"])]
    if r.get("kernel_tuner_blocking_wait"):
        kt_runs.append(("PoCL cache warm, each launch waited for on its event, not polled",
                        r["kernel_tuner_blocking_wait"]))
    for label, kt in kt_runs:
        t = kt["time_s"]
        w = kt["winner"] or {}
        lines.append(f"| Kernel Tuner {kt['kernel_tuner_version']}, {label} (brute_force, {kt['iterations']} "
                     f"iterations, mean) | {kt['candidates']} | {kt['wall_s']:.1f} | {kt['candidates_per_s']:.2f} | "
                     f"{t['compile']:.1f} | {t['verification']:.1f} | {t['benchmark']:.1f} | "
                     f"{kt['wall_s'] - t['compile'] - t['verification'] - t['benchmark']:.1f} | - | "
                     f"{w.get('config', '-')} | {w.get('median_ms', 0):.3f} |")
    for label, k in (("cold", r["kforge_cold"]), ("warm", r["kforge_warm"])):
        if k.get("finalists"):
            fin_s = k["time_s"].get("finalists")
            lines += ["", f"kforge {label}: {len(k['finalists'])} finalists re-timed interleaved"
                      + (f" in {fin_s:.2f} s ({k.get('retimings')} re-timing(s))" if fin_s is not None else "")
                      + " (search median -> interleaved median, ms): " + ", ".join(
                          f"{f['config']} {f['search_median_ms']:.2f} -> {f['interleaved_median_ms']:.2f}"
                          for f in k["finalists"]) + "."]
            if k.get("retiming_note"):
                lines += [f"kforge {label}: {k['retiming_note']}."]
    if r.get("waiting"):
        kf = {x["config"]: x["median_ms"] for x in r["kforge_warm"]["results"]}
        ktw = {x["config"]: x["time_ms"] for x in r["kernel_tuner_warm"]["results"]}
        lines += ["", "How each tool waits for a launch, warm runs' three fastest of each tool: pyopencl profiling "
                  "events over 7 launches, waited for on the event (as kforge waits) or polled with 1 us sleeps "
                  "(as Kernel Tuner's benchmark loop waits), ms:", "",
                  "| config | kforge median | pyopencl, waited, median | pyopencl, polled, median | "
                  "Kernel Tuner mean | pyopencl, polled, mean |", "|---|---|---|---|---|---|"]
        for w in r["waiting"]:
            lines.append(f"| {w['config']} | {kf.get(w['config'], 0):.2f} | {w['waited_median_ms']:.2f} | "
                         f"{w['polled_median_ms']:.2f} | {ktw.get(w['config'], 0):.2f} | {w['polled_mean_ms']:.2f} |")
        waited = min(r["waiting"], key=lambda w: w["waited_median_ms"])["config"]
        polled = min(r["waiting"], key=lambda w: w["polled_mean_ms"])["config"]
        lines += ["", f"Fastest of these waited for: {waited} (kforge's warm winner: "
                  f"{(r['kforge_warm']['winner'] or {}).get('config', '-')}); polled: {polled} (Kernel Tuner's warm "
                  f"winner: {(r['kernel_tuner_warm']['winner'] or {}).get('config', '-')})."]
    lines += ["", f"Ratio kforge / Kernel Tuner candidates per second: cold {r['ratio_cold']:.2f}x, "
              f"warm {r['ratio_warm']:.2f}x (goal >= 3x). Same winner: cold {'yes' if r['same_winner'] else 'no'}, "
              f"warm {'yes' if r['same_winner_warm'] else 'no'}"
              + (f"; Kernel Tuner waiting on each launch's event instead of polling names "
                 f"{(r['kernel_tuner_blocking_wait']['winner'] or {}).get('config', '-')} (one of kforge's winners: "
                 f"{'yes' if r['same_winner_blocking_wait'] else 'no'})" if r.get("kernel_tuner_blocking_wait") else "")
              + f". Each tool's time for the other's winner "
              f"(cold, warm): Kernel Tuner ms of kforge's winner {r['kernel_tuner_time_of_kforge_winner_ms']}, "
              f"kforge median ms of Kernel Tuner's winner {r['kforge_median_of_kernel_tuner_winner_ms']}.",
              "", "kforge wall s is the whole `kforge tune` process (start, database, search, finalists' "
              "re-timing); its measure s holds the search's timing and the finalists' re-timing; overhead = wall - "
              "compile - validate - measure. Kernel Tuner wall s is the "
              "tune_kernel call (Python start and imports excluded); its overhead = wall - compile - "
              "verification - benchmark. kforge times a candidate adaptively (1-30 repetitions: cut once the fastest "
              "of its untimed validation launch and its samples, two or more launches, is over 1.5x the best; "
              "its first timed launch is also its poisoned-output validation run), "
              "else at least 5; median; "
              "docs/measurement.md) and re-times finalists; Kernel Tuner runs 7 iterations and reports the mean.",
              ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
