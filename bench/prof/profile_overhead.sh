#!/usr/bin/env bash
# Cost of profiling a training run: the seed-001 CNN on Fashion-MNIST trained without profiling
# and with software counters at batch scope and at node scope, alternately in one run; prints
# samples/s (median of REPEATS) and the overhead of each scope. Goals: batch <= 1%, node <= 5%.
#   bench/prof/profile_overhead.sh [--batches N] [--batch-size B] [--repeats R] [--threads T]
set -euo pipefail
cd "$(dirname "$0")/../.."
batches=100 batch_size=128 repeats=3 threads=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --batches) batches=$2; shift 2 ;;
    --batch-size) batch_size=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    -h|--help) sed -n 2,5p "$0"; exit 0 ;;
    *) echo "profile_overhead.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "profile_overhead.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
events=task-clock,page-faults,context-switches
run() {  # extra args -> samples/s
  "$telar" train --model mnist_cnn --data fashion-mnist --epochs 1 --batch-size "$batch_size" \
    --momentum 0.9 --lr 0.05 --limit-batches "$batches" --threads "$threads" --quiet --json \
    --out "$tmp/run$RANDOM" "$@" 2>/dev/null |
    python3 -c "import json,sys; print(json.loads(sys.stdin.read().splitlines()[-1])['samples_per_s'])"
}
declare -a none batch node
for r in $(seq "$repeats"); do
  none+=("$(run)")
  batch+=("$(run --profile $events --profile-scopes run,epoch,batch)")
  node+=("$(run --profile $events --profile-scopes run,epoch,batch,node)")
done
python3 - "$repeats" "${none[@]}" "${batch[@]}" "${node[@]}" <<'PY'
import statistics, sys
r = int(sys.argv[1]); v = [float(x) for x in sys.argv[2:]]
none, batch, node = (statistics.median(v[i*r:(i+1)*r]) for i in range(3))
print(f"seed-001 CNN training, samples/s (median of {r}):")
print(f"  no profiling       {none:10.1f}")
print(f"  batch scope        {batch:10.1f}   overhead {100*(none/batch-1):6.2f}%   goal <= 1%")
print(f"  node scope         {node:10.1f}   overhead {100*(none/node-1):6.2f}%   goal <= 5%")
PY
