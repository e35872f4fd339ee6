#!/usr/bin/env bash
# Inference latency on a quiet machine and with two competing 2-thread processes (two telar
# trainings, the case of issue 23), telar beside ONNX Runtime (npm's onnxruntime-node, installed
# into a cache folder by bench/peer/install_ort.sh on first use), both running the same file
# PyTorch 1.13 exported, at the same thread count. Alternating runs, median of REPEATS, each
# the median of RUNS timed inferences. Prints per model and load the latencies, each side's
# slow-down under load (loaded / quiet) and telar's slow-down over ORT's.
#   bench/load/latency_under_load.sh [--threads N] [--repeats R] [--runs K] [--models LIST]
#                                    [--telar-backend SPEC]
# LIST: comma-separated rows model:input:batch (default resnet18:3x224x224:1,
# mobilenet_v1:3x224x224:1). SPEC: telar's --backend (default cpu; cpu:adapt=off turns off the
# thread choice that keeps telar from collapsing under load, to see what it does).
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=2
repeats=5
runs=30
models="resnet18:3x224x224:1,mobilenet_v1:3x224x224:1"
backend=cpu
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --telar-backend) backend=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "latency_under_load.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "latency_under_load.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
py=/usr/bin/python3
tmp=$(mktemp -d)
load_pids=()
stop_load() {
  for pid in "${load_pids[@]}"; do kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  load_pids=()
}
trap 'stop_load; rm -rf "$tmp"' EXIT

ort_dir=$(bench/peer/install_ort.sh)
export NODE_PATH="$ort_dir/node_modules"
ort_version=$(node -e "console.log(require('onnxruntime-node').env.versions.common)")
json_field() { "$py" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
median() { "$py" -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
ratio() { "$py" -c "print(f'{$1/$2:.2f}')"; }

# Two competing trainings of the seed CNN, 2 threads each, restarted as they finish, each in a
# process group of its own (so that stop_load ends the loop and its telar together).
start_load() {
  for k in 1 2; do
    setsid bash -c "while :; do '$telar' train --model mnist_cnn --data synthetic:60000:1x28x28:10 \
      --epochs 1 --batch-size 64 --threads 2 --quiet --overwrite --out '$tmp/load$k' >/dev/null 2>&1; done" &
    load_pids+=("$!")
  done
  sleep 2  # let them start computing
}

pair() {  # file input batch -> "telar ort" median latency ms, alternating
  local file=$1 input=$2 batch=$3 t=() o=()
  for r in $(seq "$repeats"); do
    t+=("$("$telar" infer --model "$file" --backend "$backend" --batch "$batch" \
        --threads "$threads" --repeats "$runs" --json | json_field latency_ms_median)")
    o+=("$(node bench/peer/ort_infer.js "$file" --input "$input" --batch "$batch" \
        --threads "$threads" --repeats "$runs" | json_field latency_ms_median)")
  done
  echo "$(median "${t[@]}") $(median "${o[@]}")"
}

echo "telar ($backend) vs ONNX Runtime $ort_version, $threads threads, median of $repeats x $runs runs, $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %10s %10s %10s %10s %10s %10s %12s\n' "latency (ms)" "quiet t" "quiet ORT" "loaded t" "loaded ORT" "t slowdn" "ORT slowdn" "t/ORT slowdn"
IFS=, read -r -a rows <<<"$models"
for row in "${rows[@]}"; do
  IFS=: read -r model input batch <<<"$row"
  file="$tmp/$model-$input.onnx"
  "$py" bench/peer/torch_export.py --model "$model" --input "$input" --out "$file" 2>/dev/null
  read -r tq oq <<<"$(pair "$file" "$input" "$batch")"
  start_load
  read -r tl ol <<<"$(pair "$file" "$input" "$batch")"
  loaded_at=$(cut -d' ' -f1 /proc/loadavg)
  stop_load
  ts=$(ratio "$tl" "$tq"); os=$(ratio "$ol" "$oq")
  printf '%-28s %10.3f %10.3f %10.3f %10.3f %9sx %9sx %11sx   (load %s)\n' "$model $input b$batch" \
    "$tq" "$oq" "$tl" "$ol" "$ts" "$os" "$(ratio "$ts" "$os")" "$loaded_at"
  sleep 3  # let the load die down before the next quiet measurement
done
