#!/usr/bin/env bash
# A sanitized build of the tree (GCC, -DKFORGE_SANITIZE) and the tests it is for:
#   tools/sanitize.sh thread    ThreadSanitizer: the lookup, online tuning and
#                               C API tests, which use the runtime from several
#                               threads (the lookup from 8 threads, online
#                               tuning's background tuner beside launches)
#   tools/sanitize.sh address   AddressSanitizer and UBSan: the unit tests of
#                               the runtime, tuner, sweep and report (label unit)
# A data race, a lock-order inversion, a memory error, a leak or undefined
# behaviour fails the run with the sanitizer's report. Each is a second full
# build, in KFORGE_BUILD_DIR (default build)/<mode>.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-thread}
out=${KFORGE_BUILD_DIR:-build}/$mode
case "$mode" in
  thread)
    sanitize=thread
    targets=(kforge lookup_tests online_tuning_tests c_api_tests)
    tests='^(lookup_tests|online_tuning_tests|c_api_tests):'
    # PoCL's own threads run uninstrumented code; what they share with kforge
    # is synchronized through OpenCL calls, which TSan cannot see: tests/tsan.supp.
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
    ;;
  address)
    sanitize=address,undefined
    targets=(runtime_unit_tests gpu_device_tests blaslt_gemm_tests clock_reader_tests tuner_unit_tests
             counter_profiler_tests sweep_plan_tests bound_verdict_tests)
    tests='^(runtime_unit_tests|gpu_device_tests|blaslt_gemm_tests|clock_reader_tests|tuner_unit_tests|counter_profiler_tests|sweep_plan_tests|bound_verdict_tests):'
    export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
    export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
    ;;
  *)
    echo "usage: tools/sanitize.sh thread|address" >&2
    exit 2
    ;;
esac
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKFORGE_SANITIZE="$sanitize" -DKFORGE_PYTHON=OFF \
      -DKFORGE_WITH_MPI=OFF -DCMAKE_CXX_FLAGS=-fno-sanitize-recover=all >/dev/null
cmake --build "$out" -j"$(nproc)" --target "${targets[@]}"
ctest --test-dir "$out" -R "$tests" --output-on-failure --timeout 900 -j"$(nproc)"
