#!/usr/bin/env bash
# Whole-model simulation speed (issue 4's goal): MobileNetV1 at 224x224, batch 1, 1000 classes,
# on sim:configs/maeri_256mses_128_bw.cfg must complete in under 60 s on 2 cores (STONNE needs
# hours for a network of this size). Runs the whole `telar simulate` command REPEATS times and
# prints, per run, its wall time (building the model, the cpu reference forward, mapping and
# simulating every layer, writing the run directory and STONNE's files) and the simulation's
# own time; then the best and the median, and whether the best meets the goal. The totals
# (cycles, Global Buffer traffic) are printed too: they must not change between runs.
#   bench/sim/simulate_mobilenet.sh [--repeats R] [--backend sim:FILE] [--model M] [--input CxHxW]
set -euo pipefail
cd "$(dirname "$0")/../.."
repeats=3 backend=sim:configs/maeri_256mses_128_bw.cfg model=mobilenet_v1 input=3x224x224
while [ $# -gt 0 ]; do
  case "$1" in
    --repeats) repeats=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "simulate_mobilenet.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "simulate_mobilenet.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "telar simulate --model $model --input $input --classes 1000 --batch 1 --backend $backend"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
walls=()
for ((r = 1; r <= repeats; ++r)); do
  start=$(date +%s.%N)
  "$telar" simulate --model "$model" --input "$input" --classes 1000 --batch 1 \
    --backend "$backend" --out "$tmp/run$r" --json >"$tmp/out$r"
  end=$(date +%s.%N)
  wall=$(python3 -c "print(f'{$end - $start:.2f}')")
  walls+=("$wall")
  python3 - "$tmp/out$r" "$wall" "$r" <<'EOF'
import json, sys
j = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print(f"run {sys.argv[3]}: {sys.argv[2]} s wall, simulation {j['seconds']:.2f} s; "
      f"{j['cycles']} cycles, GB reads {j['gb_reads']}, writes {j['gb_writes']}, "
      f"{j['simulated_layers']} layers simulated, max |sim - cpu| {j['max_abs_diff_vs_cpu']}")
EOF
done
python3 - "${walls[@]}" <<'EOF'
import statistics, sys
w = sorted(float(x) for x in sys.argv[1:])
best, median = w[0], statistics.median(w)
print(f"best {best:.2f} s, median {median:.2f} s (goal < 60 s): "
      + ("meets the goal" if best < 60 else "MISSES the goal"))
EOF
