#!/usr/bin/env bash
# Runs the parsers' libFuzzer harnesses (fuzz/, issue 23): builds them (scripts/build.sh fuzz),
# then each for SECONDS (default 10), one harness per core side by side, from its seed corpus
# (fuzz/corpus/NAME, never written; what a run finds new goes to build/fuzz/corpus/NAME). A parser may refuse an input only with
# telar::Error: a crash, a sanitizer's report, another exception, an input taking more than 5 s
# or a process growing past 2 GB is a finding, saved to build/fuzz/findings/NAME/ and the
# script fails. TELAR_FUZZ_SEED and TELAR_FUZZ_RUNS make a run repeatable (libFuzzer's -seed and
# -runs): `.ci/run` (scripts/test.sh) runs every harness for the same 20,000 inputs each time, so
# that its verdict changes only with the code; for long runs, as random as libFuzzer likes:
#   scripts/fuzz.sh 3600 mtx counters       # an hour each for two of them
#   scripts/fuzz.sh --list                  # the harnesses
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=10
if [ "${1:-}" = --list ]; then
  sed -n 's/^telar_fuzzer(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt
  exit 0
fi
if [ $# -gt 0 ]; then
  case "$1" in
    ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$1' (scripts/fuzz.sh [SECONDS] [NAME...])" >&2; exit 2 ;;
  esac
  seconds=$1; shift
fi
names=("$@")
[ ${#names[@]} -gt 0 ] || mapfile -t names < <(sed -n 's/^telar_fuzzer(\([a-z_]*\) .*/\1/p' fuzz/CMakeLists.txt)
for n in "${names[@]}"; do
  [ -d "fuzz/corpus/$n" ] || { echo "fuzz.sh: no harness '$n' (scripts/fuzz.sh --list)" >&2; exit 2; }
done
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ not found; install clang and libclang-rt-14-dev (scripts/setup.sh)" >&2
  exit 2
fi
scripts/build.sh fuzz
# One harness: a line saying what it ran, or its report (kept in build/fuzz/findings/NAME.log).
fuzz_one() {
  local n=$1 log="build/fuzz/findings/$1.log"
  mkdir -p "build/fuzz/corpus/$n" "build/fuzz/findings/$n"
  # The seed files named in a fixed order (a folder would give them in the order the file
  # system lists them, which sorting by size leaves in place for files of equal size, so a seed
  # would draw other inputs on another machine).
  local seeds
  seeds=$(printf '%s\n' fuzz/corpus/"$n"/* | LC_ALL=C sort | paste -sd, -)
  if build/fuzz/fuzz/fuzz_"$n" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
      -seed="${TELAR_FUZZ_SEED:-0}" -runs="${TELAR_FUZZ_RUNS:--1}" \
      -max_len=65536 -print_final_stats=1 -artifact_prefix="build/fuzz/findings/$n/" \
      -seed_inputs="$seeds" "build/fuzz/corpus/$n" >"$log" 2>&1; then
    printf 'fuzz %-12s %s\n' "$n" "$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') inputs, nothing found"
  else
    echo "fuzz $n: FOUND something; the input is in build/fuzz/findings/$n/, the report:" >&2
    grep -m1 -B2 -A25 -E 'ERROR|==[0-9]+==|terminate|deadly|timeout' "$log" >&2 || tail -30 "$log" >&2
    return 1
  fi
}
# The harnesses run side by side, one per core (each is one single-threaded process); a
# harness's report is printed whole when it ends.
jobs=${TELAR_JOBS:-$(nproc)}
mkdir -p build/fuzz/findings
for n in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "build/fuzz/findings/$n.failed"
  (fuzz_one "$n" >"build/fuzz/findings/$n.out" 2>&1 || touch "build/fuzz/findings/$n.failed"
   cat "build/fuzz/findings/$n.out") &
done
wait
failed=()
for n in "${names[@]}"; do
  [ ! -e "build/fuzz/findings/$n.failed" ] || failed+=("$n")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in ${failed[*]}" >&2
  exit 1
fi
