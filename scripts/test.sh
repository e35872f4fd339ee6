#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs dependencies, builds, runs every test,
# then repeats the tests under AddressSanitizer + UndefinedBehaviorSanitizer.
# Tests labelled "slow" (training to an accuracy target) run in the release build only.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
jobs=${TELAR_JOBS:-$(nproc)}
scripts/build.sh release
ctest --test-dir build/release --output-on-failure -j"$jobs"
if [ "${TELAR_SKIP_SANITIZE:-0}" != 1 ]; then
  scripts/build.sh sanitize
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build/sanitize --output-on-failure -j"$jobs" -LE slow
fi
echo "telar: all tests passed"
