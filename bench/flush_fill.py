#!/usr/bin/env python3
"""What one cache flush costs on an OpenCL device: the buffer of the size
kforge flushes on it (`cache_flush_bytes` in a sweep's settings; 64 MiB here)
written with clEnqueueFillBuffer and a 4-, 16- and 64-byte pattern, and by a
kernel storing 16 bytes per work-item, 15 times each (wall time around the
enqueue and clFinish, median and minimum, ms). kforge fills with a 16-byte
pattern (runtime/device/opencl/opencl_cache_flush.cpp, docs/measurement.md step 4).

Runs pyopencl from bench/.venv (bench/kernel_tuner_comparison.py installs it).

    bench/flush_fill.py [--kforge build/kforge] [--mib 64]
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_env import ROOT, context, finish, write_receipt  # noqa: E402

VENV_PYTHON = os.path.join(ROOT, "bench", ".venv", "bin", "python")
REPS = 15


def measure(mib):
    """Runs inside bench/.venv: prints JSON {method: [ms, ...]}."""
    import json
    import numpy as np
    import pyopencl as cl

    ctx = cl.create_some_context(interactive=False)
    q = cl.CommandQueue(ctx)
    n = mib << 20
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n)
    kernel = cl.Kernel(cl.Program(ctx, "__kernel void fill(__global uint4* b, uint v) {"
                                       " b[get_global_id(0)] = (uint4)(v); }").build(), "fill")

    def timed(enqueue):
        out = []
        for k in range(REPS):
            t0 = time.perf_counter()
            enqueue(k + 1)
            q.finish()
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    def by_kernel(k):
        kernel.set_args(buf, np.uint32(k))
        cl.enqueue_nd_range_kernel(q, kernel, (n // 16,), None)

    print(json.dumps({
        "fill, 4-byte pattern": timed(lambda k: cl.enqueue_fill_buffer(q, buf, np.uint32(k), 0, n)),
        "fill, 16-byte pattern": timed(lambda k: cl.enqueue_fill_buffer(q, buf, np.full(4, k, np.uint32), 0, n)),
        "fill, 64-byte pattern": timed(lambda k: cl.enqueue_fill_buffer(q, buf, np.full(16, k, np.uint32), 0, n)),
        "kernel, 16 bytes per work-item": timed(by_kernel),
        "device": ctx.devices[0].name,
    }))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kforge", default=os.path.join(ROOT, "build", "kforge"))
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "receipts"))
    ap.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure_only:
        return measure(args.mib)
    import json
    import statistics

    if not os.path.exists(VENV_PYTHON):
        sys.exit(f"{VENV_PYTHON} is missing: run bench/kernel_tuner_comparison.py once, which installs pyopencl there")
    ctx = context(args.kforge, "flush_fill", {"mib": args.mib, "reps": REPS})
    r = subprocess.run([VENV_PYTHON, os.path.abspath(__file__), "--measure-only", "--mib", str(args.mib)],
                       capture_output=True, text=True, check=True)
    times = json.loads(r.stdout.strip().splitlines()[-1])
    device = times.pop("device")
    finish(ctx)
    receipt = {"context": ctx, "device": device, "times_ms": times}
    lines = [f"# One cache flush of {args.mib} MiB on {device}", "",
             f"{ctx['date']}, kforge {ctx['git_revision']}, CPU {ctx['cpu']} x{ctx['cpu_count']}, load average "
             f"{ctx['load_average_at_start'][0]:.1f} at start. Wall time of enqueue + clFinish, {REPS} times each.",
             "", "| method | median ms | min ms |", "|---|---|---|"]
    for method, ms in times.items():
        lines.append(f"| {method} | {statistics.median(ms):.2f} | {min(ms):.2f} |")
    write_receipt(args.out, "flush_fill", receipt, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
