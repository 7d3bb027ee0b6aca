#!/usr/bin/env bash
# The prepared GPU check (docs/device-check.md). On an NVIDIA machine with the
# CUDA driver, cmake, a C++ compiler and python3 with PyTorch, and no package
# registry, it builds kforge there, runs the `gpu` tests, tunes GEMM (f32 and
# bf16; 4096^3 and the decode shape M=16,N=4096,K=4096), measures the ceilings
# of the same run (device-to-device copy bandwidth, cuBLAS through
# torch.matmul) and writes a receipt (JSON + Markdown) under bench/receipts/.
#
#   tools/device-check.sh prepare   on a Debian 12 machine with apt: downloads
#                                   the build dependencies as .deb files into
#                                   .device-deps/ (they travel with the tree)
#   tools/device-check.sh run       on the GPU machine
#
# Environment: KFORGE_CHECK_BUDGET_S (seconds of tuning per sweep, default 60),
# KFORGE_CHECK_MAX_EVALS (candidates per sweep, default 24).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
deps_dir=.device-deps
build="build-device"
budget=${KFORGE_CHECK_BUDGET_S:-60}
max_evals=${KFORGE_CHECK_MAX_EVALS:-24}
# Debian packages kforge builds against that a GPU image lacks (no dependencies
# are resolved: this is the closed list, headers and the two shared libraries).
deb_packages=(libsqlite3-dev libsqlite3-0 nlohmann-json3-dev libcli11-dev catch2 ocl-icd-opencl-dev
              ocl-icd-libopencl1 opencl-c-headers pkgconf pkgconf-bin libpkgconf3)

die() { echo "device-check: $*" >&2; exit 1; }

prepare() {
  command -v apt-get >/dev/null || die "prepare needs apt-get (a Debian 12 machine with its package registry)"
  mkdir -p "$deps_dir"
  (cd "$deps_dir" && apt-get download "${deb_packages[@]}")
  echo "device-check: $(find "$deps_dir" -name '*.deb' | wc -l) packages in $deps_dir; carry it to the GPU machine"
}

check_gpu() {
  command -v nvidia-smi >/dev/null || die "no NVIDIA driver here (nvidia-smi not found): run this on the GPU machine"
  nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || die "nvidia-smi lists no GPU: $(nvidia-smi -L 2>&1 | head -1)"
  python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    die "python3 with a CUDA-enabled PyTorch is required for the ceilings (torch.cuda.is_available() is false)"
  command -v cmake >/dev/null || die "cmake not found"
}

# Uses the system's packages where present, else the .deb files from `prepare`
# unpacked under $build/deps (never into /).
configure() {
  local args=(-DCMAKE_BUILD_TYPE=Release -DKFORGE_WARNINGS_AS_ERRORS=OFF)
  if ! pkg-config --exists sqlite3 2>/dev/null || [ ! -f /usr/include/nlohmann/json.hpp ]; then
    compgen -G "$deps_dir/*.deb" >/dev/null ||
      die "build dependencies missing and no $deps_dir/*.deb: run 'tools/device-check.sh prepare' on a CPU machine first"
    local prefix=$root/$build/deps
    mkdir -p "$prefix"
    for deb in "$deps_dir"/*.deb; do dpkg-deb -x "$deb" "$prefix" 2>/dev/null || (cd "$prefix" && ar p "$root/$deb" data.tar.xz | tar -xJ); done
    export PKG_CONFIG_SYSROOT_DIR=$prefix
    export PKG_CONFIG_LIBDIR=$prefix/usr/lib/x86_64-linux-gnu/pkgconfig:$prefix/usr/share/pkgconfig
    export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    local pc=pkg-config
    command -v pkg-config >/dev/null || pc=$prefix/usr/bin/pkgconf
    args+=(-DCMAKE_PREFIX_PATH="$prefix/usr" -DPKG_CONFIG_EXECUTABLE="$pc"
           -DOpenCL_INCLUDE_DIR="$prefix/usr/include" -DOpenCL_LIBRARY="$prefix/usr/lib/x86_64-linux-gnu/libOpenCL.so")
  fi
  cmake -S . -B "$build" "${args[@]}" >"$build.configure.log" 2>&1 || { tail -20 "$build.configure.log"; die "cmake failed"; }
}

run() {
  check_gpu
  mkdir -p "$build"
  configure
  cmake --build "$build" -j"$(nproc)" --target kforge cuda_gpu_tests cuda_tests >"$build/build.log" 2>&1 ||
    { tail -30 "$build/build.log"; die "build failed (log: $build/build.log)"; }
  local work
  work=$(mktemp -d)
  echo "device-check: gpu tests"
  ctest --test-dir "$build" -L gpu --output-on-failure --timeout 900 | tee "$work/ctest.txt"
  if grep -q "Skipped" "$work/ctest.txt"; then die "gpu tests were skipped on a GPU machine (see above)"; fi
  ctest --test-dir "$build" -R "cuda_tests" --timeout 900 >"$work/ctest_cuda.txt" 2>&1 ||
    { tail -20 "$work/ctest_cuda.txt"; die "cuda compile tests failed"; }

  local db=$work/device-check.db
  for dtype in f32 bf16; do
    for shape in M=4096,N=4096,K=4096 M=16,N=4096,K=4096; do
      echo "device-check: tune gemm $dtype $shape"
      "$build/kforge" tune --device cuda:0 --db "$db" --op gemm --dtype "$dtype" --layout NN --shape "$shape" \
        --max-evals "$max_evals" --time-budget "$budget" --json >"$work/tune_${dtype}_${shape//[=,]/_}.json"
    done
  done
  "$build/kforge" devices --json >"$work/devices.json"

  echo "device-check: ceilings and receipt"
  KF_WORK=$work KF_ROOT=$root python3 - <<'PY'
import glob, json, os, platform, subprocess, time
import torch

work, root = os.environ["KF_WORK"], os.environ["KF_ROOT"]
dev = torch.device("cuda:0")

def timed(fn, reps=20, warm=3):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]

n = 1 << 30
src = torch.empty(n, dtype=torch.uint8, device=dev)
dst = torch.empty_like(src)
copy_ms = timed(lambda: dst.copy_(src))
copy_gbs = 2 * n / (copy_ms * 1e-3) / 1e9  # bytes read + written
del src, dst

def cublas(dtype, m, n_, k):
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(m, k, device=dev).to(dtype)
    b = torch.randn(k, n_, device=dev).to(dtype)
    ms = timed(lambda: torch.matmul(a, b))
    return ms, 2.0 * m * n_ * k / (ms * 1e-3) / 1e12

def sh(cmd):
    try: return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e: return f"unavailable ({e})"

rows = []
for path in sorted(glob.glob(os.path.join(work, "tune_*.json"))):
    t = json.load(open(path))
    key = t["problem"]
    dims = dict(kv.split("=") for kv in key.split("/")[1].split(","))
    m, n_, k = int(dims["M"]), int(dims["N"]), int(dims["K"])
    dtype = key.split("/")[2]
    tdtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    ref_ms, ref_tflops = cublas(tdtype, m, n_, k)
    w = t.get("winner") or {}
    med = w.get("median_ms") or 0
    tflops = 2.0 * m * n_ * k / (med * 1e-3) / 1e12 if med else 0
    rows.append({"problem": key, "winner": w, "achieved_tflops": tflops, "evaluated": t.get("evaluated"),
                 "failed": t.get("failed"), "cublas_ms": ref_ms, "cublas_tflops": ref_tflops,
                 "ratio_to_cublas": (ref_ms / med) if med else 0})

bf16_peak = cublas(torch.bfloat16, 8192, 8192, 8192)
receipt = {
    "schema_version": 1,
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "git_revision": sh(f"git -C {root} rev-parse HEAD"),
    "hardware": {"nvidia_smi": sh("nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader"),
                 "torch_device": torch.cuda.get_device_name(0),
                 "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
                 "host": platform.node(), "cpu": platform.processor()},
    "software": {"cuda_driver": sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader"),
                 "nvcc": sh("nvcc --version | tail -1"), "torch": torch.__version__, "torch_cuda": torch.version.cuda,
                 "cmake": sh("cmake --version | head -1"), "python": platform.python_version(),
                 "kforge_devices": json.load(open(os.path.join(work, "devices.json")))},
    "ceilings": {"d2d_copy_gbs": copy_gbs, "d2d_copy_bytes": n,
                 "cublas_bf16_8192_tflops": bf16_peak[1]},
    "sweeps": rows,
}
out_dir = os.path.join(root, "bench", "receipts")
os.makedirs(out_dir, exist_ok=True)
stem = os.path.join(out_dir, "device-check-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime()))
json.dump(receipt, open(stem + ".json", "w"), indent=2)
md = [f"# kforge device check, {receipt['date']}", "",
      f"GPU: {receipt['hardware']['nvidia_smi']}  ",
      f"torch {torch.__version__} (CUDA {torch.version.cuda}); kforge {receipt['git_revision'][:12]}", "",
      f"Ceilings measured in this run: device-to-device copy {copy_gbs:.0f} GB/s (read + write); "
      f"cuBLAS bf16 8192^3 {bf16_peak[1]:.0f} TFLOP/s.", "",
      "| problem | winner | median ms (p20 / p80, n) | TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | kforge / cuBLAS |",
      "|---|---|---|---|---|---|---|"]
for r in rows:
    w = r["winner"]
    md.append(f"| {r['problem']} | {w.get('template', '-')} {w.get('config', '')} | "
              f"{w.get('median_ms', 0):.4f} ({w.get('p20_ms', 0):.4f} / {w.get('p80_ms', 0):.4f}, {w.get('count', 0)}) | "
              f"{r['achieved_tflops']:.2f} | {r['cublas_ms']:.4f} | {r['cublas_tflops']:.1f} | {r['ratio_to_cublas']:.3f} |")
open(stem + ".md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
print("receipt:", stem + ".json", stem + ".md")
PY
  rm -rf "$work"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: tools/device-check.sh prepare|run (docs/device-check.md)" >&2; exit 2 ;;
esac
