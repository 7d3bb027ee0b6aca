#!/usr/bin/env python3
"""Lookup latency of the kforge runtime against a launch of the same kernel.

Tunes one GEMM problem into a scratch database (a few candidates), then runs
build/bench/kforge_bench_lookup twice in fresh processes: with PoCL's kernel
cache off (cold: the first select compiles) and with it warm (the compiler's
disk cache holds the binary). Writes a JSON receipt with the environment
into bench/receipts/ and prints a summary.

    bench/lookup_latency.py [--build build] [--shape 256 256 256] [--calls 2000000]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], check=True,
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--shape", type=int, nargs=3, default=[256, 256, 256])
    ap.add_argument("--calls", type=int, default=2000000)
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
        cache = os.path.join(tmp, "pocl-cache")
        for name, env in [("compiler_cache_off", {"POCL_KERNEL_CACHE": "0"}),
                          ("compiler_cache_fill", {"POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": cache}),
                          ("compiler_cache_warm", {"POCL_KERNEL_CACHE": "1", "POCL_CACHE_DIR": cache})]:
            out = subprocess.run([bench, db, str(m), str(n), str(k), "--calls", str(args.calls)], check=True,
                                 capture_output=True, text=True, env={**os.environ, **env}).stdout
            runs[name] = json.loads(out)
    first = runs["compiler_cache_off"]
    receipt = {
        "benchmark": "lookup_latency",
        "command": "bench/lookup_latency.py " + " ".join(
            ["--build", args.build, "--shape", str(m), str(n), str(k), "--calls", str(args.calls)]),
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
    path = os.path.join(args.out, "lookup_latency_" + datetime.date.today().strftime("%Y%m%d") + ".json")
    with open(path, "w") as f:
        json.dump(receipt, f, indent=2)
        f.write("\n")
    for name, r in runs.items():
        c = r["cold_start_ms"]
        print(f"{name}: hot select p50 {r['hot_select_ns']['p50']:.1f} ns p99 {r['hot_select_ns']['p99']:.1f} ns; "
              f"C API p50 {r['hot_select_c_ns']['p50']:.1f} ns; cold start {c['total']:.2f} ms "
              f"(open {c['open_db']:.2f}, select {c['first_select']:.2f}, compile+load {c['compile_and_load']:.2f}); "
              f"launch p50 {r['launch_wall_ns']['p50'] / 1e3:.1f} us wall, {r['launch_device_ns']['p50'] / 1e3:.1f} us device; "
              f"hot/launch {r['ratios']['hot_select_p50_over_launch_p50']:.2e}, "
              f"cold/launch {r['ratios']['cold_start_over_launch_p50']:.1f}")
    print("receipt:", path)


if __name__ == "__main__":
    main()
