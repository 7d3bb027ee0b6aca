#!/usr/bin/env bash
# Builds the runtime, the C library and the tests that use them from several
# threads with ThreadSanitizer (-DKFORGE_SANITIZE=thread, GCC), and runs
# them: the lookup's selection and launches from many threads, online
# tuning's background tuner beside the program's launches, the C API. A data
# race or a lock-order inversion fails the run with TSan's report.
#   KFORGE_BUILD_DIR (default build): the TSan build goes in its tsan/ folder.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${KFORGE_BUILD_DIR:-build}/tsan
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKFORGE_SANITIZE=thread -DKFORGE_PYTHON=OFF \
      -DKFORGE_WITH_MPI=OFF >/dev/null
cmake --build "$out" -j"$(nproc)" --target kforge lookup_tests online_tuning_tests c_api_tests
# PoCL's own threads run uninstrumented code; what they share with kforge is
# synchronized through OpenCL calls, which TSan cannot see: tests/tsan.supp.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
ctest --test-dir "$out" -R '^(lookup_tests|online_tuning_tests|c_api_tests):' --output-on-failure \
      --timeout 900 -j"$(nproc)"
