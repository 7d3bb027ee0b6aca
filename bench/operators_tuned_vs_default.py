#!/usr/bin/env python3
"""Tuned vs default configuration per operator, on one device (PoCL here).

For each operator and two sizes: `kforge tune` with a fixed budget of
candidates (random strategy, the default configuration first), then the
winner's and the default's median time, their speedup, and the napkin math
(GB/s from the operator's byte count, GFLOP/s where it counts flops). Writes
a JSON receipt with the environment under bench/receipts/ and prints a
Markdown table.

    bench/operators_tuned_vs_default.py [--kforge build/kforge] [--max-evals 12]
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

# (operator, shape, attributes, bytes moved: a function of the shape)
CASES = [
    ("gemm", "M=256,N=256,K=256", "", "bias+relu"),
    ("gemm", "M=512,N=512,K=512", "", "bias+relu"),
    ("reduce", "rows=64,cols=4096", "kind=sum,axis=last", "none"),
    ("reduce", "rows=64,cols=65536", "kind=sum,axis=last", "none"),
    ("softmax", "rows=256,cols=1024", "", "none"),
    ("softmax", "rows=32,cols=65536", "", "none"),
    ("transpose", "rows=512,cols=512,batch=1", "", "none"),
    ("transpose", "rows=2048,cols=2048,batch=1", "", "none"),
    ("layernorm", "rows=256,cols=1024", "", "none"),
    ("layernorm", "rows=2048,cols=4096", "", "none"),
    ("rmsnorm", "rows=256,cols=1024", "", "none"),
    ("rmsnorm", "rows=2048,cols=4096", "", "none"),
    ("attention", "B=1,H=8,S=256,D=64", "mask=causal", "none"),
    ("attention", "B=4,H=8,S=1,SK=4096,D=128", "mask=none", "none"),  # decode step
]





def problem_bytes(op, shape):
    d = {k: int(v) for k, v in (kv.split("=") for kv in shape.split(","))}
    if op == "gemm":
        m, n, k = d["M"], d["N"], d["K"]
        return 4 * (m * k + k * n + m * n + n)
    if op == "reduce":
        return 4 * d["rows"] * d["cols"] + 4 * d["rows"]
    if op == "attention":  # Q, K, V in, O out, all f32
        return 4 * d["B"] * d["H"] * d["D"] * (2 * d["S"] + 2 * d.get("SK", d["S"]))
    return 8 * d["rows"] * d["cols"] * d.get("batch", 1)  # softmax, transpose: f32 in, f32 out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--max-evals", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()

    load_at_start = os.getloadavg()
    devices = run_json([args.kforge, "devices", "--json"])
    version = subprocess.run([args.kforge, "--version"], capture_output=True, text=True).stdout.strip()
    rows = []
    for op, shape, attrs, epilogue in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [args.kforge, "tune", "--op", op, "--shape", shape, "--device", args.device, "--max-evals",
                   str(args.max_evals), "--seed", str(args.seed), "--db", os.path.join(tmp, "bench.db"), "--json",
                   "--epilogue", epilogue]
            if attrs:
                cmd += ["--attr", attrs]
            r = run_json(cmd)
        w, d = r["winner"], r["default"]
        nbytes = problem_bytes(op, shape)
        row = {"operator": op, "problem": r["problem"], "evaluated": r["evaluated"], "failed": r["failed"],
               "winner": w and {"config": w["config"], "median_ms": w["median_ms"], "gflops": w.get("gflops")},
               "default": d and {"config": d["config"], "median_ms": d["median_ms"], "gflops": d.get("gflops")},
               "speedup_vs_default": r.get("speedup_vs_default"), "bytes": nbytes,
               "winner_gbps": w and nbytes / (w["median_ms"] * 1e-3) / 1e9,
               "default_gbps": d and d["median_ms"] > 0 and nbytes / (d["median_ms"] * 1e-3) / 1e9,
               "tune_s": r["time_s"]["total"]}
        rows.append(row)
        print(json.dumps(row), flush=True)

    receipt = {
        "schema_version": 1,
        "benchmark": "operators_tuned_vs_default",
        "context": {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "git_revision": git_revision(), "kforge": version, "host": platform.node(),
                    "python": platform.python_version(), "load_at_start": load_at_start,
                    "load_at_end": os.getloadavg(), "devices": devices,
                    "settings": {"max_evals": args.max_evals, "seed": args.seed, "device": args.device}},
        "results": rows,
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "operators_tuned_vs_default-" +
                        datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + ".json")
    with open(path, "w") as f:
        json.dump(receipt, f, indent=2)
    print("\n| problem | default config | default ms | winner config | winner ms | speedup | winner GB/s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        d, w = r["default"] or {}, r["winner"] or {}
        print(f"| {r['problem']} | {d.get('config', '-')} | {d.get('median_ms', 0):.4g} | {w.get('config', '-')} | "
              f"{w.get('median_ms', 0):.4g} | {r['speedup_vs_default'] or 0:.2f}x | {r['winner_gbps'] or 0:.3g} |")
    print(f"\nreceipt: {path}")


if __name__ == "__main__":
    main()
