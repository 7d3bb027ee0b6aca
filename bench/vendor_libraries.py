#!/usr/bin/env python3
"""Library candidates against kforge's kernels: per GEMM size, `kforge tune`
with the library templates included (CLBlast on OpenCL), then what the
database holds (kforge show: the best kernel, the best library call, their
ratio) and what the runtime selects (kforge lookup).

    bench/vendor_libraries.py [--build build] [--sizes 256 512 1024] [--max-evals 24]

Each size is tuned into a fresh database with `--strategy model`; the
library's call forms are a few of the budget, the rest go to the kernels.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_env  # noqa: E402


def side(entry):
    if not entry:
        return "-", None
    return f"{entry['template']} {entry['config']}", entry["median_ms"]


def gflops(n, ms):
    return 2.0 * n ** 3 / (ms * 1e-3) / 1e9 if ms else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(bench_env.ROOT, "build"))
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024])
    ap.add_argument("--max-evals", type=int, default=24)
    ap.add_argument("--device", default="opencl:0")
    ap.add_argument("--out", default=os.path.join(bench_env.ROOT, "bench", "receipts"))
    a = ap.parse_args()
    kforge = os.path.join(a.build, "kforge")
    ctx = bench_env.context(kforge, "vendor_libraries", {"max_evals": a.max_evals})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in a.sizes:
            db = os.path.join(tmp, f"gemm{n}.db")
            shape = f"M={n},N={n},K={n}"
            tune = bench_env.run_json([kforge, "tune", "--op", "gemm", "--shape", shape, "--dtype", "f32",
                                       "--device", a.device, "--strategy", "model", "--max-evals",
                                       str(a.max_evals), "--db", db, "--quiet", "--json"])
            show = bench_env.run_json([kforge, "show", "--db", db, "--json"])
            look = bench_env.run_json([kforge, "lookup", "--op", "gemm", "--shape", shape, "--dtype", "f32",
                                       "--device", a.device, "--db", db, "--json"])
            versus = show["vendor_comparison"][0] if show["vendor_comparison"] else {}
            rows.append({"n": n, "tune": tune, "vendor_comparison": versus,
                         "selected": {k: look[k] for k in ("template", "config", "rule", "explanation")}})
    bench_env.finish(ctx)
    md = ["# Library candidates: CLBlast against kforge's best kernel (gemm f32 NN)", "",
          f"{ctx['cpu']}, {ctx['cpu_count']} cores, {ctx['date']}, kforge {ctx['git_revision']}; "
          f"`kforge tune --strategy model --max-evals {a.max_evals}` per size on {a.device}; medians.", "",
          "| N | kforge best | ms | GFLOP/s | CLBlast best | ms | GFLOP/s | kernel / library | selected |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        v = r["vendor_comparison"]
        k_name, k_ms = side(v.get("kernel_best"))
        l_name, l_ms = side(v.get("library_best"))
        ratio = v.get("kernel_over_library", 0)
        md.append(f"| {r['n']} | {k_name} | {k_ms or 0:.3f} | {gflops(r['n'], k_ms):.1f} | {l_name} | "
                  f"{l_ms or 0:.3f} | {gflops(r['n'], l_ms):.1f} | {ratio:.2f} | "
                  f"{r['selected']['template']} ({r['selected']['rule']}) |")
    md += ["", "Kernel / library above 1: the library is faster. Selected: what `kforge lookup` picks.",
           "", f"Command: `{ctx['command']}`", ""]
    bench_env.write_receipt(a.out, "vendor_libraries", {"context": ctx, "rows": rows}, "\n".join(md))


if __name__ == "__main__":
    main()
