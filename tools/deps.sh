# Sourced by tools/quickstart.sh and tools/test.sh: installs, with apt-get,
# the Debian packages kforge needs that are missing. Does nothing when all are
# present, so it is safe to run every time.
kforge_packages=(cmake g++ make pkg-config git libsqlite3-dev nlohmann-json3-dev libcli11-dev catch2
                 ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
                 libamdhip64-dev libhiprtc-builtins5 rocm-device-libs llvm-15-dev librocm-smi-dev librocm-smi64-1)
# The offline HIP compiler for gfx942 and gfx950, which hipRTC 5.2 cannot reach
# (docs/compile-only.md): clang 22, in bookworm-security.
kforge_packages+=(clang-22 lld-22 llvm-22)
# libFuzzer and the sanitizer runtimes of clang 22 (tools/fuzz.sh).
kforge_packages+=(libclang-rt-22-dev)
# The Python package (bindings/python): headers, venv and pip for nanobind and pytest, NumPy.
kforge_packages+=(python3-dev python3-venv python3-pip python3-numpy)
# The report test: a headless browser renders kforge report, libpng reads its screenshot.
kforge_packages+=(chromium libpng-dev)
# Library candidates: CLBlast, loaded with dlopen (docs/vendor-libraries.md).
kforge_packages+=(libclblast-dev)
# Distributed sweeps: Open MPI (kforge sweep --mpi, docs/sweep.md).
kforge_packages+=(libopenmpi-dev openmpi-bin)

kforge_install_deps() {
  local missing=()
  for p in "${kforge_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "kforge: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
