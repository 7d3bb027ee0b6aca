#!/usr/bin/env bash
# Installs what is missing, builds kforge (Release) and runs the main job:
# tune the GEMM template on the best device present (a GPU when there is one,
# else the CPU through PoCL) into ./kforge.db, then print the winners.
# Extra arguments go to `kforge tune` (e.g. --shape M=512,N=512,K=512).
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/deps.sh
kforge_install_deps
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
# The main job needs only the CLI: the tests are tools/test.sh's to build.
cmake --build build -j"$(nproc)" --target kforge
./build/kforge devices
./build/kforge tune --op gemm --shape M=256,N=256,K=256 --dtype f32 --layout NN \
  --device auto --db kforge.db --max-evals 40 "$@"
./build/kforge show --db kforge.db
