#!/usr/bin/env bash
# Installs what is missing, builds (warnings are errors) and runs every test a
# CPU can run. The exit code is the verdict.
#   KFORGE_TEST_LEVEL=core|full  (default core) chooses the sweep sizes of the
#   longer tests; tests needing a GPU skip here with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
kforge_install_deps
build=${KFORGE_BUILD_DIR:-build}
# The Python package's build and tests use a venv in the build tree: nanobind
# pytest and NumPy from PyPI (docs/python.md): the venv's Python need not be
# Debian's, whose NumPy it would not see.
mkdir -p "$build"
# Absolute: CMake would not find a relative Python_EXECUTABLE from its build tree.
python_env="$(cd "$build" && pwd)/python-env"
[ -x "$python_env/bin/python" ] || python3 -m venv --system-site-packages "$python_env"
# nvdisasm (not in every CUDA toolkit) lets the SASS tests read NVRTC's cubins.
"$python_env/bin/python" -m pip install -q --disable-pip-version-check "nanobind>=2,<4" pytest numpy "triton==3.9.0" \
  "nvidia-cuda-nvdisasm>=13,<14"
nvdisasm=$(ls "$python_env"/lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm 2>/dev/null | head -n 1)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKFORGE_WARNINGS_AS_ERRORS=ON \
      -DPython_EXECUTABLE="$python_env/bin/python" ${nvdisasm:+-DKFORGE_NVDISASM="$nvdisasm"}
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure --timeout 900 -j"$(nproc)"
# The parsers of outside bytes under libFuzzer with ASan and UBSan, a fixed
# number of executions each (tests/fuzz/README.md).
KFORGE_BUILD_DIR="$build" tools/fuzz.sh
# The runtime, tuner, sweep and report unit tests under ASan and UBSan, and
# the concurrent lookup, online tuning and C API tests under ThreadSanitizer:
# two more builds, unoptimized (tools/sanitize.sh).
KFORGE_BUILD_DIR="$build" tools/sanitize.sh address
KFORGE_BUILD_DIR="$build" tools/sanitize.sh thread
