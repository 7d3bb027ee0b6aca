#!/usr/bin/env bash
# The prepared GPU check (docs/device-check.md). On an NVIDIA machine with the
# CUDA driver, cmake, a C++ compiler and python3 with PyTorch, and no package
# registry, it builds kforge there, runs the `gpu` tests, measures compile
# overlap on the same candidates with it off and on (cold and warm binary
# cache), tunes GEMM (f32 and bf16; 4096^3 and the decode shape
# M=16,N=4096,K=4096), runs one model search of f32 2048^3 cold and warm-started
# from the 4096^3 winner and cold with compile overlap off, measures the ceilings of the same run (device-to-device
# copy bandwidth, cuBLAS through torch.matmul), profiles each tuned winner with
# ncu (a counters table with the bound verdicts) and writes a receipt.
#
#   tools/device-check.sh prepare        on a Debian 12 machine with apt: downloads
#                                        the build dependencies as .deb files into
#                                        .device-deps/ (they travel with the tree)
#   tools/device-check.sh build          on the GPU machine: only configures and builds
#                                        build-device/kforge and prints the
#                                        LD_LIBRARY_PATH it runs with, for a short
#                                        measurement of its own
#   tools/device-check.sh run [OUT_DIR]  on the GPU machine; the receipt (JSON and
#                                        Markdown) and a tarball of every raw
#                                        output go to OUT_DIR (default bench/receipts)
#
# Environment: KFORGE_CHECK_BUDGET_S (seconds of tuning per sweep, default 40),
# KFORGE_CHECK_MAX_EVALS (candidates per sweep, default 24), KFORGE_CHECK_DEVICE
# (default cuda:0), KFORGE_CHECK_N (the 4096 of the shapes), KFORGE_CHECK_USE_DEBS=1 (build against the .deb files even
# where the system has the packages), KFORGE_CHECK_CMAKE_ARGS (more cmake
# arguments), KFORGE_SOURCE_REVISION (the revision to
# record where the tree has no git history).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
deps_dir=.device-deps
build="build-device"
budget=${KFORGE_CHECK_BUDGET_S:-40}
max_evals=${KFORGE_CHECK_MAX_EVALS:-24}
device=${KFORGE_CHECK_DEVICE:-cuda:0}
n=${KFORGE_CHECK_N:-4096}
# Debian packages kforge builds against that a GPU image lacks (no dependencies
# are resolved: this is the closed list, headers and the two shared libraries).
deb_packages=(libsqlite3-dev libsqlite3-0 nlohmann-json3-dev libcli11-dev catch2 ocl-icd-opencl-dev
              ocl-icd-libopencl1 opencl-c-headers pkgconf pkgconf-bin libpkgconf3)

die() { echo "device-check: $*" >&2; exit 1; }

prepare() {
  command -v apt-get >/dev/null || die "prepare needs apt-get (a Debian 12 machine with its package registry)"
  mkdir -p "$deps_dir"
  (cd "$deps_dir" && apt-get download "${deb_packages[@]}") || die "apt-get download failed"
  echo "device-check: $(find "$deps_dir" -name '*.deb' | wc -l) packages in $deps_dir; carry it to the GPU machine"
}

check_gpu() {
  command -v nvidia-smi >/dev/null || die "no NVIDIA driver here (nvidia-smi not found): run this on the GPU machine"
  nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || die "nvidia-smi lists no GPU: $(nvidia-smi -L 2>&1 | head -1)"
  python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    die "python3 with a CUDA-enabled PyTorch is required for the ceilings (torch.cuda.is_available() is false)"
  command -v cmake >/dev/null || die "cmake not found"
}

# NVRTC is loaded with dlopen by soname; a CUDA image may keep it outside the
# loader's path (the toolkit's lib64, or PyTorch's nvidia-cuda-nvrtc wheel).
find_nvrtc() {
  ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so' && return
  local nvcc_dir dirs=()
  nvcc_dir=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
  dirs+=("$nvcc_dir/../lib64" "$nvcc_dir/../targets/x86_64-linux/lib" /usr/local/cuda/lib64)
  dirs+=($(python3 -c 'import nvidia, os; print(" ".join(os.path.join(p, sub) for p in nvidia.__path__ for sub in ("cuda_nvrtc/lib", "cu13/lib", "cu12/lib")))' 2>/dev/null))
  for d in "${dirs[@]}"; do
    if compgen -G "$d/libnvrtc.so*" >/dev/null; then
      export LD_LIBRARY_PATH=$(realpath "$d")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
      echo "device-check: NVRTC from $(realpath "$d")"
      return
    fi
  done
  echo "device-check: no libnvrtc found; CUDA candidates will fail to compile" >&2
}

# Uses the system's packages where present, else the .deb files from `prepare`
# unpacked under $build/deps (never into /).
configure() {
  local args=(-DCMAKE_BUILD_TYPE=Release -DKFORGE_WARNINGS_AS_ERRORS=OFF)
  if [ "${KFORGE_CHECK_USE_DEBS:-0}" = 1 ] || ! pkg-config --exists sqlite3 2>/dev/null ||
     [ ! -f /usr/include/nlohmann/json.hpp ] || [ ! -f /usr/include/CLI/CLI.hpp ]; then
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
  cmake -S . -B "$build" "${args[@]}" ${KFORGE_CHECK_CMAKE_ARGS:-} >"$build/configure.log" 2>&1 || { tail -20 "$build/configure.log"; return 1; }
}

# step NAME STDOUT_FILE SECONDS CMD...: runs CMD under a time limit, stdout to
# STDOUT_FILE and stderr to $raw/NAME.err; records rc and seconds in
# $raw/steps.tsv. A failed step is listed and the check goes on, so one run
# brings back everything that works.
step() {
  local name=$1 stdout=$2 limit=$3
  shift 3
  local t0 rc ms
  t0=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" >"$stdout" 2>"$raw/$name.err"
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%s\t%s\t%d.%03d\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000)) >>"$raw/steps.tsv"
  echo "device-check: $name rc=$rc ($((ms / 1000)).$((ms % 1000 / 100)) s)"
  [ "$rc" = 0 ] || failed+=("$name")
}

tune() {  # tune NAME ARGS...: one `kforge tune --json` as a step
  local name=$1
  shift
  step "$name" "$raw/$name.json" 150 "$build/kforge" tune --device "$device" --quiet --json "$@"
  python3 - "$raw/$name.json" <<'PY' || true
import json, sys
try:
    t = json.load(open(sys.argv[1]))
    w, ts = t.get("winner") or {}, t["time_s"]
    print(f"  {t['problem']}: {t['evaluated_now']} evaluated, {t['failed']} failed, {ts['total']:.1f} s "
          f"(compile {ts['compile']:.1f}, measure {ts['measure']:.1f}); overlap {t.get('compile_overlap')}; "
          f"winner {w.get('config')} {w.get('median_ms', 0):.4f} ms; clocks {(w.get('clocks') or {}).get('source')}")
except Exception as e:
    print(f"  no summary: {e}")
PY
}

# What the runtime selects for a tuned GEMM problem, and the cuBLASLt entry
# bound again from its stored algorithm (--library force --prepare): the
# receipt's vendor table (tools/device_check_vendor.py).
vendor_lookups() {  # vendor_lookups RUN DB DTYPE SHAPE
  local name=$1 db=$2 dtype=$3 shape=$4
  local problem=(--op gemm --dtype "$dtype" --layout NN --shape "$shape" --db "$db" --device "$device" --json)
  step "lookup_$name" "$raw/lookup_$name.json" 60 "$build/kforge" lookup "${problem[@]}"
  step "lookup_${name}_cublaslt" "$raw/lookup_${name}_cublaslt.json" 60 "$build/kforge" lookup "${problem[@]}" \
    --library force --prepare
}

# Counters of each tuned winner (docs/profiling.md): each sweep of sweeps.db
# run again with --profile, which reuses the stored results and runs ncu on a
# separate launch of the winner and finalists (stored timings unchanged),
# then a counters table with the bound verdicts from `kforge show`. Written
# to $out/device-check-$stamp-counters.{json,md}; self-contained so that the
# receipt's own tables stay separate.
profile_winners() {
  command -v ncu >/dev/null || echo "device-check: ncu not on PATH; the counters table will say unavailable"
  for job in "bf16:M=$n,N=$n,K=$n" "f32:M=16,N=$n,K=$n" "bf16:M=16,N=$n,K=$n"; do
    local dtype=${job%%:*} shape=${job#*:}
    step "profile_${dtype}_${shape//[=,]/_}" "$raw/profile_${dtype}_${shape//[=,]/_}.json" 300 \
      "$build/kforge" tune --device "$device" --quiet --json --op gemm --dtype "$dtype" --layout NN --shape "$shape" \
      --max-evals "$max_evals" --time-budget "$budget" --cache-dir "$raw/cache_on" --db "$raw/sweeps.db" --profile
  done
  step counters_show "$raw/counters_show.json" 60 "$build/kforge" show --results --json --db "$raw/sweeps.db"
  python3 - "$raw/counters_show.json" "$out/device-check-$stamp-counters" <<'PY' || failed+=("counters table")
import json, sys
shown, stem = json.load(open(sys.argv[1])), sys.argv[2]
short = [("dram__bytes_read.sum", "DRAM read MB", 1e-6), ("dram__bytes_write.sum", "DRAM write MB", 1e-6),
         ("lts__t_sector_hit_rate.pct", "L2 hit %", 1), ("l1tex__t_sector_hit_rate.pct", "L1 hit %", 1),
         ("sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy %", 1),
         ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor pipe %", 1),
         ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "FMA pipe %", 1),
         ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "bank conflicts", 1)]
rows = []
for w in shown.get("winners", []):
    by = {c["collector"]: c for c in w.get("counters", [])}
    ncu = by.get("ncu", {})
    got = ncu.get("readings", {})
    stalls = sorted(((v["value"], k.split("stalled_")[1].split(".")[0]) for k, v in got.items() if "_stalled_" in k),
                    reverse=True)[:3]
    rows.append({"problem": w["problem"], "template": w["template"], "config": w["config"],
                 "median_ms": w["median_ms"], "tool": ncu.get("tool", ""),
                 "unavailable": ncu.get("unavailable", "" if ncu else "no ncu row"),
                 "counters": {label: got[k]["value"] * f for k, label, f in short if k in got},
                 "top_stalls": [[r, v] for v, r in stalls], "bound": w.get("bound", {})})
json.dump({"schema_version": 1, "winners": rows}, open(stem + ".json", "w"), indent=2)
with open(stem + ".md", "w") as md:
    md.write("| problem | template | config | ms | " + " | ".join(l for _, l, _ in short) +
             " | top stalls | bound |\n|" + "---|" * (len(short) + 6) + "\n")
    for r in rows:
        cells = [f"{r['counters'][l]:.4g}" if l in r["counters"] else "-" for _, l, _ in short]
        note = r["unavailable"] or ", ".join(f"{s} {v:.3g}" for s, v in r["top_stalls"])
        md.write(f"| {r['problem']} | {r['template']} | {r['config']} | {r['median_ms']:.4f} | " + " | ".join(cells) +
                 f" | {note} | {r['bound'].get('text', '-')} |\n")
print(open(stem + ".md").read())
PY
}

run() {
  local out=${1:-bench/receipts}
  check_gpu
  mkdir -p "$out" "$build"
  out=$(realpath "$out")
  local stamp work
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  work=$(mktemp -d)
  raw=$work/device-check-$stamp
  mkdir -p "$raw"
  failed=()
  printf 'step\trc\tseconds\n' >"$raw/steps.tsv"
  nvidia-smi -q >"$raw/nvidia-smi-before.txt" 2>&1
  find_nvrtc

  local t0=$SECONDS
  configure || die "cmake failed (log: $build/configure.log)"
  timeout 400 cmake --build "$build" -j"$(nproc)" --target kforge cuda_gpu_tests nvml_gpu_tests gpu_cli_tests \
    >"$raw/build.log" 2>&1 || { tail -30 "$raw/build.log"; cp "$raw/build.log" "$out/device-check-$stamp-build.log"; die "build failed"; }
  echo "device-check: built in $((SECONDS - t0)) s; $("$build/kforge" --version)"

  step gpu_tests "$raw/ctest_gpu.txt" 300 ctest --test-dir "$build" -L gpu -j3 --output-on-failure --timeout 240
  tail -25 "$raw/ctest_gpu.txt"
  grep -q "Skipped" "$raw/ctest_gpu.txt" && failed+=("gpu tests skipped on a GPU machine")

  # The device's own peaks (copy bandwidth, FP32 FMA) into the sweeps'
  # database first, so every verdict below is against what kforge measured.
  step measured_ceilings "$raw/ceilings.json" 120 "$build/kforge" ceilings --device "$device" --json \
    --copy-mib 1024 --db "$raw/sweeps.db"
  cat "$raw/ceilings.json"

  # Compile overlap: the same candidates (random order, one seed) with the
  # compiles between measurements, then ahead of them, from an empty binary
  # cache; then again from the warm cache.
  # Every GEMM tune compares cuBLASLt's algorithms (gemm_cublaslt) with the kernels.
  local space=(--op gemm --dtype f32 --layout NN --shape "M=$n,N=$n,K=$n" --strategy random --seed 1
               --max-evals "$max_evals" --library compare)
  tune overlap_off_cold "${space[@]}" --compile-overlap off --cache-dir "$raw/cache_off" --db "$raw/overlap_off.db"
  tune overlap_on_cold "${space[@]}" --compile-overlap on --cache-dir "$raw/cache_on" --db "$raw/overlap_on.db"
  tune overlap_on_warm "${space[@]}" --compile-overlap on --cache-dir "$raw/cache_on" --db "$raw/overlap_warm.db"
  vendor_lookups overlap_on_cold "$raw/overlap_on.db" f32 "M=$n,N=$n,K=$n"

  # The tuning sweeps compared with cuBLAS (f32 N^3 is overlap_on_cold's).
  for job in "bf16:M=$n,N=$n,K=$n" "f32:M=16,N=$n,K=$n" "bf16:M=16,N=$n,K=$n"; do
    local dtype=${job%%:*} shape=${job#*:}
    tune "sweep_${dtype}_${shape//[=,]/_}" --op gemm --dtype "$dtype" --layout NN --shape "$shape" \
      --max-evals "$max_evals" --time-budget "$budget" --cache-dir "$raw/cache_on" --db "$raw/sweeps.db" \
      --library compare
    vendor_lookups "sweep_${dtype}_${shape//[=,]/_}" "$raw/sweeps.db" "$dtype" "$shape"
  done
  # Warm start on the device: one model search of a new shape (f32 (N/2)^3),
  # from an empty database, then from one holding only the f32 N^3 results
  # (overlap_on_cold's) with --warm-start 1, which proposes that winner second.
  local half=$((n / 2))
  local warm=(--op gemm --dtype f32 --layout NN --shape "M=$half,N=$half,K=$half" --strategy model --seed 1
              --max-evals 16)
  cp "$raw/overlap_on.db" "$raw/warm_start_on.db"
  tune warm_start_off "${warm[@]}" --cache-dir "$raw/cache_model_on" --db "$raw/warm_start_off.db"
  tune warm_start_on "${warm[@]}" --cache-dir "$raw/cache_model_on" --warm-start 1 --db "$raw/warm_start_on.db"
  # The same cold model search with compile overlap off: warm_start_off
  # (overlap on, the default on a GPU) compiles its likely next candidates
  # while one is measured; this one compiles each when it is proposed.
  tune model_overlap_off "${warm[@]}" --compile-overlap off --cache-dir "$raw/cache_model_off" \
    --db "$raw/model_overlap_off.db"
  step show_results "$raw/results.json" 60 "$build/kforge" show --results --json --db "$raw/sweeps.db"
  step devices "$raw/devices.json" 60 "$build/kforge" devices --json
  # The same GPU through OpenCL, where the driver's OpenCL is installed: a
  # short run whose winner's clocks must come from NVML, found by the PCI
  # address the OpenCL device reports (runtime/profiling/pci_clock_reader.hpp).
  local cl_gpu
  cl_gpu=$(python3 -c 'import json, sys
print(next((d["selector"] for d in json.load(open(sys.argv[1]))
            if d.get("backend") == "opencl" and d.get("device_type") == "gpu"), ""))' "$raw/devices.json" 2>/dev/null)
  if [ -n "$cl_gpu" ]; then
    device=$cl_gpu tune opencl_gpu --op gemm --dtype f32 --layout NN --shape M=1024,N=1024,K=1024 \
      --max-evals 8 --no-cache --db "$raw/opencl_gpu.db"
  else
    echo "device-check: no OpenCL GPU listed; opencl_gpu skipped"
  fi
  profile_winners
  nvidia-smi -q >"$raw/nvidia-smi-after.txt" 2>&1

  echo "device-check: ceilings and receipt"
  printf '%s\n' "${failed[@]}" >"$raw/failed.txt"
  step receipt "$raw/receipt.txt" 300 env KF_RAW="$raw" KF_ROOT="$root" KF_OUT="$out" KF_STAMP="$stamp" \
    python3 "$root/tools/device_check_receipt.py"
  cat "$raw/receipt.txt" "$raw/receipt.err" 2>/dev/null | tail -40
  rm -rf "$raw"/cache_*
  tar -czf "$out/device-check-$stamp-raw.tar.gz" -C "$work" "device-check-$stamp"
  echo "device-check: raw outputs in $out/device-check-$stamp-raw.tar.gz"
  rm -rf "$work"
  if [ ${#failed[@]} -gt 0 ]; then die "failed: ${failed[*]}"; fi
  echo "device-check: all steps passed"
}

build_only() {
  check_gpu
  mkdir -p "$build"
  find_nvrtc
  configure || die "cmake failed (log: $build/configure.log)"
  timeout 400 cmake --build "$build" -j"$(nproc)" --target kforge >"$build/build.log" 2>&1 ||
    { tail -30 "$build/build.log"; die "build failed"; }
  echo "device-check: built $("$build/kforge" --version)"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
}

case "${1:-}" in
  prepare) prepare ;;
  build) build_only ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/device-check.sh prepare | build | run [OUT_DIR] (docs/device-check.md)" >&2; exit 2 ;;
esac
