#!/usr/bin/env python3
"""The vector-row templates against the ones they join, tuned in the same run.

For each (operator, shape, dtype): `kforge tune --only-template OLD`, then
`--only-template NEW`, each with the same budget and seed into its own
database, and the ratio of the winners' medians (old over new: above 1 the
vector-row template is faster). GB/s counts each input element read once and
the f32 output written once. Writes a receipt (JSON + Markdown) with the
environment under bench/receipts/.

    bench/vector_row_templates.py [--kforge build/kforge] [--max-evals 16]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, run_json, write_receipt  # noqa: E402

PAIRS = {"rmsnorm": ("rmsnorm_rowwise", "rmsnorm_vector_row"),
         "layernorm": ("layernorm_rowwise", "layernorm_vector_row"),
         "softmax": ("softmax_online", "softmax_vector_row")}
CASES = [(op, shape, dtype) for op in PAIRS for shape in ("rows=256,cols=4096", "rows=2048,cols=4096")
         for dtype in ("f32", "bf16")]
IN_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def tune(args, op, shape, dtype, template, tmp):
    db = os.path.join(tmp, template + ".db")
    return run_json([args.kforge, "tune", "--op", op, "--shape", shape, "--dtype", dtype, "--only-template",
                     template, "--device", args.device, "--max-evals", str(args.max_evals), "--seed",
                     str(args.seed), "--db", db, "--json", "--quiet"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--device", default="auto")
    ap.add_argument("--max-evals", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    args = ap.parse_args()
    ctx = context(args.kforge, "vector_row_templates",
                  {"settings": {"max_evals": args.max_evals, "seed": args.seed, "device": args.device}})
    rows = []
    for op, shape, dtype in CASES:
        old, new = PAIRS[op]
        dims = dict(kv.split("=") for kv in shape.split(","))
        nbytes = int(dims["rows"]) * int(dims["cols"]) * (IN_BYTES[dtype] + 4)
        row = {"operator": op, "shape": shape, "dtype": dtype, "bytes": nbytes}
        with tempfile.TemporaryDirectory() as tmp:
            for role, template in (("old", old), ("new", new)):
                r = tune(args, op, shape, dtype, template, tmp)
                w = r.get("winner") or {}
                row[role] = {"template": template, "config": w.get("config"), "median_ms": w.get("median_ms"),
                             "evaluated": r["evaluated"], "failed": r["failed"],
                             "gbps": w.get("median_ms") and nbytes / (w["median_ms"] * 1e-3) / 1e9}
        o, n = row["old"]["median_ms"], row["new"]["median_ms"]
        row["old_over_new"] = o / n if o and n else None
        rows.append(row)
        print(row, flush=True)
    md = ["# Vector-row templates against the ones they join\n",
          f"`{ctx['command']}` on {ctx['cpu']} ({ctx['cpu_count']} CPUs), {ctx['kforge']}; load average "
          f"{ctx['load_average_at_start'][0]:.2f} at the start. Each template tuned alone, same budget "
          f"({args.max_evals} candidates) and seed; ratio = old winner's median / new winner's.\n",
          "| problem | old winner | ms | GB/s | new winner | ms | GB/s | old/new |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        o, n = r["old"], r["new"]
        fmt = lambda x: f"{x:.4g}" if x else "-"  # noqa: E731
        md.append(f"| {r['operator']} {r['shape']} {r['dtype']} | {o['template']} {o['config']} | "
                  f"{fmt(o['median_ms'])} | {fmt(o['gbps'])} | {n['template']} {n['config']} | "
                  f"{fmt(n['median_ms'])} | {fmt(n['gbps'])} | {fmt(r['old_over_new'])} |")
    write_receipt(args.out, "vector_row_templates", {"schema_version": 1, "context": finish(ctx), "results": rows},
                  "\n".join(md) + "\n")


if __name__ == "__main__":
    main()
