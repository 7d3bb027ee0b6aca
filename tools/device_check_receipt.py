#!/usr/bin/env python3
"""The receipt of tools/device-check.sh: reads the raw outputs of one check
(steps, `kforge tune --json` per run, `kforge lookup --json` per tuned GEMM
problem with and without `--library force`, `kforge show --results --json`,
`kforge devices --json`, nvidia-smi before and after), measures the ceilings
of the same machine with PyTorch (device-to-device copy, cuBLAS on every tuned
problem and bf16 8192^3) and writes device-check-STAMP.json and .md.

Environment (set by device-check.sh): KF_RAW (raw outputs), KF_ROOT (source
tree), KF_OUT (where the receipt goes), KF_STAMP (UTC time of the check);
the steps that failed so far are listed in KF_RAW/failed.txt.
"""
import glob
import json
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import time

import torch

from device_check_vendor import vendor_markdown, vendor_row

RAW, ROOT, OUT, STAMP = (os.environ[k] for k in ("KF_RAW", "KF_ROOT", "KF_OUT", "KF_STAMP"))
DEV = torch.device("cuda:0")


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # a missing tool is recorded, not fatal
        return f"unavailable ({e})"


def load_json(name):
    path = os.path.join(RAW, name)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": f"{name}: {e}"}


def timed_ms(fn, reps=20, warm=3):
    """Median of `reps` event-timed calls after `warm` untimed ones."""
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def copy_bandwidth_gbs(n=1 << 30):
    src = torch.empty(n, dtype=torch.uint8, device=DEV)
    dst = torch.empty_like(src)
    src.random_()
    ms = timed_ms(lambda: dst.copy_(src))
    return 2 * n / (ms * 1e-3) / 1e9  # bytes read + written


TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def cublas(dtype, m, n, k):
    """cuBLAS through torch.matmul on random inputs (TF32 off: f32 is f32)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, device=DEV).to(dtype)
    b = torch.randn(k, n, device=DEV).to(dtype)
    ms = timed_ms(lambda: torch.matmul(a, b))
    return {"ms": ms, "tflops": 2.0 * m * n * k / (ms * 1e-3) / 1e12}


def problem_dims(key):
    """'gemm/K=4096,M=16,N=4096,batch=1/bf16/NN' -> (M, N, K, dtype)."""
    parts = key.split("/")
    dims = dict(kv.split("=") for kv in parts[1].split(","))
    return int(dims["M"]), int(dims["N"]), int(dims["K"]), parts[2]


def steps():
    rows = []
    with open(os.path.join(RAW, "steps.tsv")) as f:
        next(f)
        for line in f:
            name, rc, seconds = line.rstrip("\n").split("\t")
            rows.append({"step": name, "rc": int(rc), "seconds": float(seconds)})
    return rows


def failed_steps():
    try:
        return [line.strip() for line in open(os.path.join(RAW, "failed.txt")) if line.strip()]
    except OSError:
        return []


def ctest_summary():
    try:
        text = open(os.path.join(RAW, "ctest_gpu.txt")).read()
    except OSError:
        return {"error": "no ctest output"}
    tests = re.findall(r"Test\s+#\d+: (.+?) \.+\s*(Passed|\*\*\*Failed|\*\*\*Skipped|Skipped|\*\*\*Timeout|.+?)\s+[\d.]+ sec", text)
    # "100% tests passed, 0 tests failed out of 5" or, from newer ctest, "100% tests passed out of 5".
    summary = re.search(r"\d+% tests passed(?:, \d+ tests failed)? out of \d+", text)
    return {"tests": [{"name": n.strip(), "result": r.strip("* ")} for n, r in tests],
            "summary": summary.group(0) if summary else "no summary line"}


def clock_summary(clocks):
    if not isinstance(clocks, dict) or "summary" not in clocks:
        return None
    s = clocks["summary"]
    return {"source": clocks.get("source"), "samples": s.get("samples"),
            "core_mhz": [s.get("core_mhz_min"), s.get("core_mhz_median"), s.get("core_mhz_max")],
            "memory_mhz": [s.get("memory_mhz_min"), s.get("memory_mhz_max")],
            "temperature_c_max": s.get("temperature_c_max"), "power_w_max": s.get("power_w_max"),
            "throttled_samples": s.get("throttled_samples"), "reasons": s.get("reasons"),
            "reasons_known": s.get("reasons_known")}


DATABASES = {"overlap_off_cold": "overlap_off.db", "overlap_on_cold": "overlap_on.db",
             "overlap_on_warm": "overlap_warm.db", "opencl_gpu": "opencl_gpu.db",
             "warm_start_off": "warm_start_off.db", "warm_start_on": "warm_start_on.db",
             "model_overlap_off": "model_overlap_off.db"}


def missing_reports(name, problem):
    """Results of this run stored without the compiler's resource report
    (registers unknown): pruning had nothing to go on for them."""
    path = os.path.join(RAW, DATABASES.get(name, "sweeps.db"))
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT r.resources_json FROM results r JOIN problems p ON p.id = r.problem_id "
                              "WHERE p.key = ?", (problem,)).fetchall()
    except sqlite3.Error as e:
        return f"unreadable ({e})"
    missing = 0
    for (text,) in rows:
        try:
            missing += json.loads(text or "{}").get("registers", -1) < 0
        except ValueError:
            missing += 1
    return missing


def tune_row(name):
    t = load_json(name + ".json")
    if "error" in t or "time_s" not in t:
        return {"run": name, "error": t.get("error", "no time_s in output")}
    ts = t["time_s"]
    overhead = ts["total"] - ts["compile"] - ts["validate"] - ts["measure"] - ts.get("setup", 0)
    w = t.get("winner") or {}
    return {"run": name, "problem": t["problem"], "evaluated": t["evaluated_now"], "failed": t["failed"],
            "compile_overlap": t.get("compile_overlap"), "cache_hits": t.get("cache_hits"),
            "compiled_ahead": t.get("compiled_ahead"), "guessed_ahead": t.get("guessed_ahead"),
            "compile_ahead_stopped": t.get("compile_ahead_stopped"),
            "worker_restarts": t.get("worker_restarts"), "timing_stops": t.get("timing_stops"),
            "time_s": {**ts, "overhead": overhead},
            "candidates_per_s": t["evaluated_now"] / ts["total"] if ts["total"] else 0,
            "winner": {k: w.get(k) for k in ("template", "config", "median_ms", "p20_ms", "p80_ms", "min_ms", "count",
                                             "gflops", "error_norm")},
            "winner_clocks": clock_summary(w.get("clocks")),
            "finalists": t.get("finalists"), "stop_reason": t.get("stop_reason"),
            "missing_reports": missing_reports(name, t["problem"]),
            "speedup_vs_default": t.get("speedup_vs_default"), "warm_starts": t.get("warm_starts") or []}


def nvidia_smi_fields(name):
    """A few lines of `nvidia-smi -q` (clocks, power, temperature, throttle state)."""
    try:
        text = open(os.path.join(RAW, name)).read()
    except OSError:
        return {}
    out = {}
    for key in ("Driver Version", "CUDA Version", "Product Name", "Persistence Mode", "Power Draw",
                "Current Power Limit", "GPU Current Temp", "Performance State"):
        m = re.search(r"^\s*" + re.escape(key) + r"\s*:\s*(.+)$", text, re.M)
        if m:
            out[key] = m.group(1).strip()
    m = re.search(r"^\s*Max Clocks\n(?:.*\n){0,4}?\s*SM\s*:\s*(.+)$", text, re.M)
    if m:
        out["Max SM clock"] = m.group(1).strip()
    return out


def main():
    overlap = [tune_row(n) for n in ("overlap_off_cold", "overlap_on_cold", "overlap_on_warm")]
    sweeps = [tune_row(os.path.basename(p)[:-5]) for p in sorted(glob.glob(os.path.join(RAW, "sweep_*.json")))]
    tuned = [r for r in [overlap[1]] + sweeps if "error" not in r]
    # The GPU through OpenCL, where it is listed (device-check.sh skips it otherwise).
    opencl_gpu = tune_row("opencl_gpu") if os.path.exists(os.path.join(RAW, "opencl_gpu.json")) else None
    warm_start = [tune_row(n) for n in ("warm_start_off", "warm_start_on")]
    model_overlap = [warm_start[0], tune_row("model_overlap_off")]

    ceilings = {"d2d_copy_gbs": copy_bandwidth_gbs(), "cublas_bf16_8192": cublas(torch.bfloat16, 8192, 8192, 8192)}
    for r in tuned:
        m, n, k, dtype = problem_dims(r["problem"])
        r["cublas"] = cublas(TORCH_DTYPES[dtype], m, n, k)
        med = r["winner"].get("median_ms") or 0
        r["tflops"] = 2.0 * m * n * k / (med * 1e-3) / 1e12 if med else 0
        r["ratio_to_cublas"] = r["cublas"]["ms"] / med if med else 0
        r["vendor"] = vendor_row(r["problem"], r["cublas"]["ms"], load_json(f"lookup_{r['run']}.json"),
                                 load_json(f"lookup_{r['run']}_cublaslt.json"))

    props = torch.cuda.get_device_properties(0)
    receipt = {
        "schema_version": 3,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "stamp": STAMP,
        "kforge_version": sh(f"{ROOT}/build-device/kforge --version"),
        "hardware": {"nvidia_smi": sh("nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm,"
                                      "clocks.max.mem,power.limit --format=csv,noheader"),
                     "torch_device": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
                     "host_cpus": os.cpu_count(), "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
                     "nvidia_smi_before": nvidia_smi_fields("nvidia-smi-before.txt"),
                     "nvidia_smi_after": nvidia_smi_fields("nvidia-smi-after.txt")},
        "software": {"nvcc": sh("nvcc --version | tail -1"), "torch": torch.__version__,
                     "torch_cuda": torch.version.cuda, "cmake": sh("cmake --version | head -1"),
                     "cxx": sh("c++ --version | head -1"), "python": platform.python_version(),
                     "os": sh(". /etc/os-release && echo $PRETTY_NAME"), "kernel": platform.release(),
                     "kforge_devices": load_json("devices.json")},
        "steps": steps(),
        "failed_steps": failed_steps(),
        "gpu_tests": ctest_summary(),
        "ceilings": ceilings,
        "compile_overlap": overlap,
        "sweeps": sweeps,
        "vendor": [t["vendor"] for t in tuned],
        "opencl_gpu": opencl_gpu,
        "warm_start": warm_start,
        "model_overlap": model_overlap,
    }
    stem = os.path.join(OUT, f"device-check-{STAMP}")
    with open(stem + ".json", "w") as f:
        json.dump(receipt, f, indent=2)
    with open(stem + ".md", "w") as f:
        f.write(markdown(receipt, overlap, tuned))
    print(markdown(receipt, overlap, tuned))
    print("receipt:", stem + ".json", stem + ".md")


def fmt(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def markdown(r, overlap, tuned):
    c = r["ceilings"]
    md = [f"# kforge device check, {r['date']}", "",
          f"GPU: {r['hardware']['nvidia_smi']}; {r['hardware']['sm_count']} SMs; host {r['hardware']['host_cpus']} CPUs  ",
          f"{r['kforge_version']}; torch {r['software']['torch']} (CUDA {r['software']['torch_cuda']}); "
          f"{r['software']['nvcc']}", "",
          f"gpu tests: {r['gpu_tests'].get('summary')}  ",
          f"failed steps: {', '.join(r['failed_steps']) or 'none'}", "",
          f"Ceilings in this run: device-to-device copy {c['d2d_copy_gbs']:.0f} GB/s (read + write); "
          f"cuBLAS bf16 8192^3 {c['cublas_bf16_8192']['tflops']:.0f} TFLOP/s.", "",
          "## Compile overlap (same candidates: gemm f32 N^3, random, seed 1)", "",
          "| run | evaluated | failed | total s | setup s | compile s | validate s | measure s | overhead s | cand/s | cache hits | no ptxas report | winner | median ms |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in overlap:
        if "error" in o:
            md.append(f"| {o['run']} | {o['error']} |")
            continue
        t = o["time_s"]
        md.append(f"| {o['run']} | {o['evaluated']} | {o['failed']} | {fmt(t['total'], 1)} | {fmt(t.get('setup'), 1)} | "
                  f"{fmt(t['compile'], 1)} | "
                  f"{fmt(t['validate'], 1)} | {fmt(t['measure'], 1)} | {fmt(t['overhead'], 1)} | "
                  f"{fmt(o['candidates_per_s'], 2)} | {o['cache_hits']} | {o['missing_reports']} | {o['winner']['config']} | "
                  f"{fmt(o['winner']['median_ms'], 4)} |")
    md += ["", "## Winners against cuBLAS (same shapes and dtypes, TF32 off)", "",
           "| problem | winner | median ms (p20 / p80, n) | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | cuBLAS / kforge time |",
           "|---|---|---|---|---|---|---|"]
    for t in tuned:
        w = t["winner"]
        md.append(f"| {t['problem']} | {w['template']} {w['config']} | {fmt(w['median_ms'], 4)} "
                  f"({fmt(w['p20_ms'], 4)} / {fmt(w['p80_ms'], 4)}, {w['count']}) | {fmt(t['tflops'], 2)} | "
                  f"{fmt(t['cublas']['ms'], 4)} | {fmt(t['cublas']['tflops'], 1)} | {fmt(t['ratio_to_cublas'])} |")
    md += vendor_markdown(r["vendor"])
    md += ["", "## Clocks of each winner (NVML, one sample after every timed launch)", "",
           "| problem | source | samples | SM MHz min / median / max | memory MHz | max C | max W | throttled | reasons |",
           "|---|---|---|---|---|---|---|---|---|"]
    for t in [overlap[1]] + [s for s in r["sweeps"]] + ([r["opencl_gpu"]] if r.get("opencl_gpu") else []):
        cl = t.get("winner_clocks")
        if not cl:
            continue
        md.append(f"| {t['problem']} | {cl['source']} | {cl['samples']} | "
                  f"{' / '.join(fmt(x, 0) for x in cl['core_mhz'])} | {' / '.join(fmt(x, 0) for x in cl['memory_mhz'])} | "
                  f"{fmt(cl['temperature_c_max'], 0)} | {fmt(cl['power_w_max'], 0)} | {cl['throttled_samples']} | "
                  f"{', '.join(cl['reasons'] or []) or '-'} |")
    o = r.get("opencl_gpu")
    md += ["", "## The GPU through OpenCL", ""]
    if not o:
        md.append("No OpenCL GPU listed by `kforge devices`: not run.")
    elif "error" in o:
        md.append(f"opencl_gpu: {o['error']}")
    else:
        cl = o.get("winner_clocks") or {}
        md.append(f"{o['problem']}: {o['evaluated']} evaluated, {o['failed']} failed, {fmt(o['time_s']['total'], 1)} s; "
                  f"winner {o['winner']['config']} {fmt(o['winner']['median_ms'], 4)} ms; "
                  f"clocks: {cl.get('source') or 'none'} ({cl.get('samples', 0)} samples).")
    md += ["", "## Warm start (gemm f32 (N/2)^3, model, seed 1; the same search cold and with --warm-start 1)", "",
           "| run | evaluated | failed | total s | warm starts (config from problem, log2 distance) | winner | median ms |",
           "|---|---|---|---|---|---|---|"]
    for w in r.get("warm_start") or []:
        if "error" in w:
            md.append(f"| {w['run']} | {w['error']} |")
            continue
        picks = "; ".join(f"{p.get('config')} from {p.get('from_problem')} ({fmt(p.get('log2_distance'), 0)})"
                          for p in w["warm_starts"]) or "-"
        md.append(f"| {w['run']} | {w['evaluated']} | {w['failed']} | {fmt(w['time_s']['total'], 1)} | {picks} | "
                  f"{w['winner']['config']} | {fmt(w['winner']['median_ms'], 4)} |")
    md += ["", "## Compile overlap for the model strategy (gemm f32 (N/2)^3, seed 1, cold binary caches)", "",
           "Overlap on compiles the model's likely next candidates while one is measured; off compiles each "
           "when it is proposed.", "",
           "| run | overlap | evaluated | failed | total s | compile s | validate s | measure s | compiled ahead | "
           "guessed ahead | stopped | winner | median ms |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for o in r.get("model_overlap") or []:
        if "error" in o:
            md.append(f"| {o['run']} | {o['error']} |")
            continue
        t = o["time_s"]
        md.append(f"| {o['run']} | {o['compile_overlap']} | {o['evaluated']} | {o['failed']} | {fmt(t['total'], 2)} | "
                  f"{fmt(t['compile'], 2)} | {fmt(t['validate'], 2)} | {fmt(t['measure'], 2)} | {o['compiled_ahead']} | "
                  f"{o['guessed_ahead']} | {o['compile_ahead_stopped'] or '-'} | {o['winner']['config']} | "
                  f"{fmt(o['winner']['median_ms'], 4)} |")
    md += ["", "## Steps", "", "| step | rc | seconds |", "|---|---|---|"]
    md += [f"| {s['step']} | {s['rc']} | {s['seconds']:.1f} |" for s in r["steps"]]
    return "\n".join(md) + "\n"


if __name__ == "__main__":
    main()
