#!/usr/bin/env python3
"""Tuning throughput of `kforge tune` on one device (PoCL in CI-like machines).

For each GEMM size: candidates per second, the time split into compile,
validate, measure and overhead, and the winner's speedup over the default
configuration. Writes a JSON receipt with the environment (device
fingerprint, compiler, git revision, date) and prints a Markdown table.

    bench/tune_throughput.py [--kforge build/kforge] [--sizes 256 512] [--max-evals 30]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, git_revision, run_json  # noqa: E402  (environment shared by the bench scripts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512])
    ap.add_argument("--max-evals", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()

    load_at_start = os.getloadavg()
    devices = run_json([args.kforge, "devices", "--json"])
    version = subprocess.run([args.kforge, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "bench.db")
            r = run_json([args.kforge, "tune", "--op", "gemm", "--shape", f"M={n},N={n},K={n}", "--dtype", "f32",
                          "--layout", "NN", "--device", args.device, "--max-evals", str(args.max_evals),
                          "--seed", str(args.seed), "--db", db, "--json"])
        t = r["time_s"]
        overhead = t["total"] - t["compile"] - t["validate"] - t["measure"] - t.get("setup", 0)
        rows.append({
            "shape": f"{n}x{n}x{n}",
            "device": r["device"],
            "evaluated": r["evaluated_now"],
            "failed": r["failed"],
            "candidates_per_s": r["evaluated_now"] / t["total"],
            "time_s": {**t, "overhead": overhead},
            "winner": r["winner"],
            "default": r["default"],
            "speedup_vs_default": r.get("speedup_vs_default"),
        })
        print(f"{n}^3 done: {r['evaluated_now']} candidates in {t['total']:.1f} s", file=sys.stderr)

    now = datetime.datetime.now(datetime.timezone.utc)
    load_at_end = os.getloadavg()
    receipt = {
        "benchmark": "tune_throughput",
        "context": {
            "date": now.isoformat(timespec="seconds"),
            "kforge": version,
            "git_revision": git_revision(),
            "host": platform.node(),
            "os": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_average_at_start": load_at_start,
            "command": " ".join(sys.argv),
            "devices": devices,
            "max_evals": args.max_evals,
            "seed": args.seed,
        },
        "load_average_at_end": load_at_end,
        "results": rows,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"tune_throughput_{now.strftime('%Y%m%d')}.json")
    with open(path, "w") as f:
        json.dump(receipt, f, indent=2)

    print("| shape | candidates | failed | cand/s | setup s | compile s | validate s | measure s | overhead s | "
          "default ms | winner ms | speedup | winner |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["time_s"]
        w, d = r["winner"] or {}, r["default"] or {}
        print(f"| {r['shape']} | {r['evaluated']} | {r['failed']} | {r['candidates_per_s']:.2f} | "
              f"{t.get('setup', 0):.1f} | {t['compile']:.1f} | {t['validate']:.1f} | {t['measure']:.1f} | "
              f"{t['overhead']:.1f} | {d.get('median_ms', 0):.3f} | {w.get('median_ms', 0):.3f} | "
              f"{(r['speedup_vs_default'] or 0):.2f}x | {w.get('config', '-')} |")
    print(f"\nreceipt: {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
