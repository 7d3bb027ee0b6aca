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
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DKFORGE_WARNINGS_AS_ERRORS=ON
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure --timeout 900 -j"$(nproc)"
