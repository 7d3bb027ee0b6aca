#!/usr/bin/env python3
"""What a restarted tuner worker saves by reading its predecessor's
validation references (tuner/measure/reference_file.hpp) instead of computing them.

Runs build/bench/kforge_bench_reference_reuse --repeat times: per GEMM size,
the seconds to compute the double-precision reference of one validation
run, to write its file and to read it back (a worker start reads two); and
the same for one attention problem (B1 H4 S1024 D128). The
median of the runs goes in the table; every run is in the receipt.

    bench/reference_reuse.py [--build build] [--sizes 512 1024 2048 4096] [--repeat 3]
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(bench_env.ROOT, "build"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048, 4096])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    kforge = os.path.join(a.build, "kforge")
    tool = os.path.join(a.build, "bench", "kforge_bench_reference_reuse")
    ctx = bench_env.context(kforge, "reference_reuse",
                            {"host_threads_env": os.environ.get("KFORGE_HOST_THREADS")})
    runs = [bench_env.run_json([tool] + [str(n) for n in a.sizes]) for _ in range(a.repeat)]
    bench_env.finish(ctx)
    rows = []
    md = ["# Validation reference: compute vs read back (gemm f32 NN, one validation run)", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}; "
          f"median of {a.repeat} runs; the file lives in {runs[0]['directory']}.", "",
          "| N | file MiB | compute s | write s | read s | compute / read |", "|---|---|---|---|---|---|"]
    for i, n in enumerate(a.sizes):
        med = {k: statistics.median(r["sizes"][i][k] for r in runs) for k in ("compute_s", "write_s", "read_s")}
        row = {"n": n, "file_mib": runs[0]["sizes"][i]["file_mib"], **med,
               "compute_over_read": med["compute_s"] / med["read_s"]}
        rows.append(row)
        md.append(f"| {n} | {row['file_mib']:.0f} | {med['compute_s']:.3f} | {med['write_s']:.3f} | "
                  f"{med['read_s']:.3f} | {row['compute_over_read']:.0f} |")
    att = {k: statistics.median(r["attention"][k] for r in runs) for k in ("compute_s", "write_s", "read_s")}
    att["problem"] = runs[0]["attention"]["problem"]
    md += ["", f"{att['problem']}: compute {att['compute_s']:.3f} s, write {att['write_s']:.3f} s, "
               f"read {att['read_s']:.3f} s."]
    md += ["", f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "reference_reuse", {"context": ctx, "median": rows, "attention_median": att, "runs": runs}, "\n".join(md))


if __name__ == "__main__":
    main()
