#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs dependencies, builds, runs every test,
# then repeats the tests under AddressSanitizer + UndefinedBehaviorSanitizer, then runs each
# parser's libFuzzer harness on the same 20,000 inputs each time (scripts/fuzz.sh).
# Tests labelled "slow" (training to an accuracy target) run in the release build only.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's wall time, printed as it ends and summed up at the end.
steps=()
step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  steps+=("$(printf '%-16s %4d s' "$name" $((SECONDS - start)))")
  echo "telar test.sh: $name took $((SECONDS - start)) s"
}
step setup scripts/setup.sh
jobs=${TELAR_JOBS:-$(nproc)}
step build-release scripts/build.sh release
step test-release ctest --test-dir build/release --output-on-failure -j"$jobs"
if [ "${TELAR_SKIP_SANITIZE:-0}" != 1 ]; then
  step build-sanitize scripts/build.sh sanitize
  step test-sanitize env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build/sanitize --output-on-failure -j"$jobs" -LE slow
fi
if [ "${TELAR_SKIP_FUZZ:-0}" != 1 ]; then
  step fuzz env TELAR_FUZZ_SEED=1 TELAR_FUZZ_RUNS=20000 scripts/fuzz.sh 60
fi
printf 'telar test.sh: %s\n' "${steps[@]}"
echo "telar: all tests passed in $SECONDS s"
