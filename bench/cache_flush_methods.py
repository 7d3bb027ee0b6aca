#!/usr/bin/env python3
"""What each way of flushing a CPU OpenCL device's caches costs, and what a
timed launch starts from after it (docs/measurement.md, "Time";
docs/backends.md, "Cache flush").

Runs build/bench/kforge_bench_cache_flush_methods --repeat times per method,
alternated, each in a fresh process: "evict" (the default on a CPU device:
its buffers evicted line by line) and "fill" (KFORGE_CPU_CACHE_FLUSH=fill: a
buffer of twice the reported last-level cache written). Each process times a
kernel that reads its input once (1, 8 and 64 MiB) and gemm_simt_tiled's
default configuration at 512^3, REPS launches with no flush before them
(warm) and REPS after a flush, alternated, and the flushes' wall time.
Medians over the processes go in the table; every run is in the receipt.

    bench/cache_flush_methods.py [--build build] [--reps 15] [--repeat 3]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402

METHODS = ("evict", "fill")


def rows(run):
    out = {f"read once, {r['input_mib']} MiB": r for r in run["read_once"]}
    out[f"GEMM 512^3 {run['gemm_512']['config']}"] = run["gemm_512"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(bench_env.ROOT, "build"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    kforge = os.path.join(a.build, "kforge")
    tool = os.path.join(a.build, "bench", "kforge_bench_cache_flush_methods")
    ctx = bench_env.context(kforge, "cache_flush_methods", {"reps": a.reps, "repeat": a.repeat})
    runs = {m: [] for m in METHODS}
    for _ in range(a.repeat):
        for m in METHODS:
            env = dict(os.environ, KFORGE_CPU_CACHE_FLUSH=m)
            run = bench_env.run_json([tool, str(a.reps)], env=env)
            if run["method"] != m:
                sys.exit(f"cache_flush_methods: asked for {m}, the device flushed by {run['method']}")
            runs[m].append(run)
    bench_env.finish(ctx)
    first = runs["evict"][0]
    med = {m: {name: {k: statistics.median(rows(r)[name][k] for r in runs[m])
                      for k in ("warm_ms", "flushed_ms", "flush_wall_ms")}
               for name in rows(first)} for m in METHODS}
    md = [f"# Cache flush on {first['device']}: buffers evicted vs a fill", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}, "
          f"load average {ctx['load_average_at_start'][0]:.1f} at start, {ctx['load_average_at_end'][0]:.1f} at end. "
          f"Reported last-level cache {first['cache_bytes'] / 2**20:.0f} MiB; the fill writes "
          f"{first['cache_flush_bytes'] / 2**20:.0f} MiB. Median over {a.repeat} processes per method, alternated, "
          f"of each process's median of {a.reps} launches (device time) and {a.reps} flushes (wall time).", "",
          "| kernel | evict: warm ms | evict: flushed ms | evict: flush ms | fill: warm ms | fill: flushed ms | "
          "fill: flush ms |", "|---|---|---|---|---|---|---|"]
    for name in med["evict"]:
        e, f = med["evict"][name], med["fill"][name]
        md.append(f"| {name} | {e['warm_ms']:.3f} | {e['flushed_ms']:.3f} | {e['flush_wall_ms']:.2f} | "
                  f"{f['warm_ms']:.3f} | {f['flushed_ms']:.3f} | {f['flush_wall_ms']:.2f} |")
    md += ["", "warm: launched right after the previous launch, no flush; flushed: right after a flush. "
           "A flush makes the next launch start with its buffers in memory only, so flushed >= warm where the "
           "buffers fit in the caches; a flush method that left them cached would read as warm.", "",
           f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "cache_flush_methods", {"context": ctx, "median": med, "runs": runs}, "\n".join(md))


if __name__ == "__main__":
    main()
