#!/usr/bin/env python3
"""Lookup latency of the kforge runtime against a launch of the same kernel.

Tunes one GEMM problem into a scratch database (a few candidates), then runs
build/bench/kforge_bench_lookup in fresh processes, each a cold start (open
the database, select, get a launchable kernel) followed by hot selects and
launches of the same kernel:

  cold                      kforge's binary cache empty, PoCL's kernel cache
                            off: one compile
  binary_cache_warm         the binary cache holds the kernel (filled by the
                            cold run), PoCL's cache off: no compile; PoCL
                            still builds its work-group function at the
                            first launch
  both_caches_fill          the same with PoCL's cache on and empty (fills it
                            for the program loaded from the binary)
  both_caches_warm          the binary cache and PoCL's kernel cache warm:
                            the steady state of a program on this machine
  compiler_cache_fill       the binary cache off, PoCL's cache on (a separate
                            cache directory, filled here)
  compiler_cache_only       the binary cache off, PoCL's cache warm (the
                            runtime before it had a binary cache)

Cold start is open + first select + getting a launchable kernel (prepare);
the first launch is reported apart (first_launch_wall_ms), as PoCL compiles
the kernel's work-group function there when its own cache is cold.

Writes a JSON receipt with the environment into bench/receipts/ and prints a
summary.

The warm modes run --repeat processes (a cold start is one sample per
process; on a loaded machine one sample says little): their cold starts and
first launches are listed and the summary gives the median.

    bench/lookup_latency.py [--build build] [--shape 256 256 256] [--calls 2000000] [--repeat 7]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, git_revision  # noqa: E402  (environment shared by the bench scripts)




def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shape", type=int, nargs=3, default=[256, 256, 256])
    ap.add_argument("--calls", type=int, default=2000000)
    ap.add_argument("--repeat", type=int, default=7, help="processes per warm mode")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()
    kforge = os.path.join(args.build, "kforge")
    bench = os.path.join(args.build, "bench", "kforge_bench_lookup")
    m, n, k = args.shape
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "bench.db")
        subprocess.run([kforge, "tune", "--shape", f"M={m},N={n},K={k}", "--max-evals", "4", "--min-reps", "2",
                        "--max-reps", "3", "--quiet", "--db", db], check=True, capture_output=True)
        binaries = ["--cache-dir", os.path.join(tmp, "binaries")]
        pocl_off = {"POCL_KERNEL_CACHE": "0"}
        pocl_with_binaries = {"POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": os.path.join(tmp, "pocl-cache-1")}
        pocl_alone = {"POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": os.path.join(tmp, "pocl-cache-2")}
        for name, env, cache in [("cold", pocl_off, binaries),
                                 ("binary_cache_warm", pocl_off, binaries),
                                 ("both_caches_fill", pocl_with_binaries, binaries),
                                 ("both_caches_warm", pocl_with_binaries, binaries),
                                 ("compiler_cache_fill", pocl_alone, ["--no-binary-cache"]),
                                 ("compiler_cache_only", pocl_alone, ["--no-binary-cache"])]:
            repeat = args.repeat if name in ("binary_cache_warm", "both_caches_warm", "compiler_cache_only") else 1
            for i in range(repeat):
                calls = args.calls if i == 0 else 1000  # hot loops measured in the first process only
                out = subprocess.run([bench, db, str(m), str(n), str(k), "--calls", str(calls)] + cache,
                                     check=True, capture_output=True, text=True, env={**os.environ, **env}).stdout
                r = json.loads(out)
                if i == 0:
                    runs[name] = r
                    runs[name]["cold_start_total_ms_per_process"] = []
                    runs[name]["first_launch_wall_ms_per_process"] = []
                runs[name]["cold_start_total_ms_per_process"].append(r["cold_start_ms"]["total"])
                runs[name]["first_launch_wall_ms_per_process"].append(r["first_launch_wall_ms"])
            runs[name]["load_average_after"] = os.getloadavg()
    first = runs["cold"]
    receipt = {
        "benchmark": "lookup_latency",
        "command": "bench/lookup_latency.py " + " ".join(
            ["--build", args.build, "--shape", str(m), str(n), str(k), "--calls", str(args.calls),
             "--repeat", str(args.repeat)]),
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git_revision": git_revision(),
            "host": platform.node(),
            "machine": platform.machine(),
            "os": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "device": first["device"],
            "build_type": "Release",
        },
        "runs": runs,
    }
    os.makedirs(args.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    path = os.path.join(args.out, "lookup_latency-" + stamp + ".json")
    with open(path, "w") as f:
        json.dump(receipt, f, indent=2)
        f.write("\n")
    for name, r in runs.items():
        c = r["cold_start_ms"]
        totals = r["cold_start_total_ms_per_process"]
        firsts = r["first_launch_wall_ms_per_process"]
        launch_ms = r["launch_wall_ns"]["p50"] / 1e6
        print(f"{name}: {len(totals)} process(es): cold start median {statistics.median(totals):.2f} ms "
              f"(min {min(totals):.2f}, max {max(totals):.2f}), first launch median {statistics.median(firsts):.2f} ms; "
              f"cold start / launch p50 {statistics.median(totals) / launch_ms:.2f}")
        print(f"{name}: kernel from {r['kernel']['origin']}; hot select p50 {r['hot_select_ns']['p50']:.1f} ns "
              f"p99 {r['hot_select_ns']['p99']:.1f} ns; C API p50 {r['hot_select_c_ns']['p50']:.1f} ns; "
              f"cold start {c['total']:.2f} ms (open {c['open_db']:.2f}, select {c['first_select']:.2f}, "
              f"kernel {c['get_kernel']:.2f}), first launch {r['first_launch_wall_ms']:.2f} ms; "
              f"launch p50 {r['launch_wall_ns']['p50'] / 1e3:.1f} us wall, {r['launch_device_ns']['p50'] / 1e3:.1f} us device; "
              f"hot/launch {r['ratios']['hot_select_p50_over_launch_p50']:.2e}, "
              f"cold/launch {r['ratios']['cold_start_over_launch_p50']:.1f}")
    print("receipt:", path)


if __name__ == "__main__":
    main()
