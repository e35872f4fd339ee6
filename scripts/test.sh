#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs dependencies, builds, runs every test,
# then repeats the tests under AddressSanitizer + UndefinedBehaviorSanitizer, then runs each
# parser's libFuzzer harness on 20,000 inputs from a fixed seed (scripts/fuzz.sh).
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
# ctest runs the longest tests first when it knows their times (CTestCostData.txt, written by
# each run): kept in the user's cache folder, so that a fresh clone starts with the last run's.
cost_cache=${XDG_CACHE_HOME:-$HOME/.cache}/telar/ctest-cost
run_tests() {
  local flavour=$1 data=build/$1/Testing/Temporary/CTestCostData.txt
  shift
  mkdir -p "$(dirname "$data")" "$cost_cache"
  [ -f "$data" ] || [ ! -f "$cost_cache/$flavour.txt" ] || cp "$cost_cache/$flavour.txt" "$data"
  ctest --test-dir "build/$flavour" --output-on-failure -j"$jobs" "$@"
  cp "$data" "$cost_cache/$flavour.txt"
}
step setup scripts/setup.sh
jobs=${TELAR_JOBS:-$(nproc)}
step build-release scripts/build.sh release
step test-release run_tests release
if [ "${TELAR_SKIP_SANITIZE:-0}" != 1 ]; then
  step build-sanitize scripts/build.sh sanitize
  # (bash passes these assignments on to what the function runs)
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    step test-sanitize run_tests sanitize -LE slow
fi
if [ "${TELAR_SKIP_FUZZ:-0}" != 1 ]; then
  step fuzz env TELAR_FUZZ_SEED=1 TELAR_FUZZ_RUNS=20000 scripts/fuzz.sh 60
fi
printf 'telar test.sh: %s\n' "${steps[@]}"
echo "telar: all tests passed in $SECONDS s"
