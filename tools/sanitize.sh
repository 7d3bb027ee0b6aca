#!/usr/bin/env bash
# A sanitized build of the tree (-DKFORGE_SANITIZE) and the tests it is for:
#   tools/sanitize.sh thread    ThreadSanitizer: the lookup, online tuning and
#                               C API tests, which use the runtime from several
#                               threads (the lookup from 8 threads, online
#                               tuning's background tuner beside launches)
#   tools/sanitize.sh address   AddressSanitizer and UBSan: the unit tests of
#                               the runtime, tuner, sweep and report
# A data race, a lock-order inversion, a memory error, a leak or undefined
# behaviour fails the run with the sanitizer's report. tools/test.sh runs both.
# Each mode is a second build of what its tests link, in KFORGE_BUILD_DIR
# (default build)/<mode>: clang 22 where present (tools/deps.sh installs it),
# else GCC; at -O0 with line tables and precompiled headers, which builds in
# about a third of -O2's time, and these tests run briefly either way.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-thread}
extra=()
out=${KFORGE_BUILD_DIR:-build}/$mode
case "$mode" in
  thread)
    sanitize=thread
    targets=(lookup_tests online_tuning_tests c_api_tests)
    # The online tuning and C API tests run the CLI as a child process: the
    # main build's where there is one (tools/test.sh builds it first).
    main_cli=${KFORGE_BUILD_DIR:-build}/kforge
    if [ -x "$main_cli" ]; then
      extra=(-DKFORGE_TEST_CLI="$(cd "$(dirname "$main_cli")" && pwd)/kforge")
    else
      extra=(-DKFORGE_TEST_CLI=)
      targets+=(kforge)
    fi
    # PoCL's own threads run uninstrumented code; what they share with kforge
    # is synchronized through OpenCL calls, which TSan cannot see: tests/tsan.supp.
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:-}"
    ;;
  address)
    sanitize=address,undefined
    targets=(runtime_unit_tests gpu_device_tests blaslt_gemm_tests clock_reader_tests tuner_unit_tests
             counter_profiler_tests sweep_plan_tests bound_verdict_tests)
    export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
    export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
    ;;
  *)
    echo "usage: tools/sanitize.sh thread|address" >&2
    exit 2
    ;;
esac
compiler=()
if command -v clang++-22 >/dev/null; then
  compiler=(-DCMAKE_CXX_COMPILER=clang++-22)
fi
cmake -S . -B "$out" "${compiler[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
      -DKFORGE_SANITIZE="$sanitize" -DKFORGE_PRECOMPILE_HEADERS=ON -DKFORGE_PYTHON=OFF \
      -DKFORGE_WITH_MPI=OFF -DCMAKE_CXX_FLAGS=-fno-sanitize-recover=all "${extra[@]}" >/dev/null
# The build's log is kept aside: clang's warnings on these unoptimized builds
# are not errors, and would bury the tests' output.
echo "sanitize: $mode: building ${targets[*]} in $out (log: $out/build.log)"
if ! cmake --build "$out" -j"$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -n 40
  echo "sanitize: $mode: the build FAILED (log: $out/build.log)"
  exit 1
fi
# The tests of the targets built (the CLI, where built, names none).
tests="^($(IFS='|'; echo "${targets[*]}")):"
ctest --test-dir "$out" -R "$tests" --output-on-failure --timeout 900 -j"$(nproc)"
