#!/usr/bin/env bash
# Side-by-side speed of telar and PyTorch 1.13 (Debian's python3-torch) on this machine, same
# threads, one run of the script: each figure is the median of REPEATS alternating runs. Then
# inference against ONNX Runtime (npm's onnxruntime-node, installed into a cache folder by
# bench/peer/install_ort.sh on first use) and PyTorch: telar and ORT run the same file PyTorch
# exported; MobileNetV1, ResNet-18 and the seed CNN at batch 1 and 32, on 1 thread and on
# --threads, quiet and with one competing busy process.
#   bench/peer_compare.sh [--threads N] [--repeats R] [--quick] [--no-ort]
# --quick: fewer batches (a smoke run for tests), not for quoting.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc)
repeats=3
no_ort=0
mlp_batches=300
cnn_batches=60
runs_per=30  # timed inference runs per measurement
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --quick) repeats=1; mlp_batches=20; cnn_batches=4; runs_per=3; shift ;;
    --no-ort) no_ort=1; shift ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "peer_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "peer_compare.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

json_field() { "$py" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
median() { "$py" -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

train_pair() {  # model batches -> "telar torch" samples/s
  local model=$1 batches=$2 t=() p=()
  for r in $(seq "$repeats"); do
    t+=("$("$telar" train --model "$model" --data fashion-mnist --epochs 1 --batch-size 128 \
        --optimizer sgd --momentum 0.9 --lr 0.05 --limit-batches "$batches" --threads "$threads" \
        --quiet --json --out "$tmp/run$r" --overwrite | json_field samples_per_s)")
    p+=("$("$py" bench/peer/torch_train.py --model "$model" --threads "$threads" \
        --limit-batches "$batches" | json_field samples_per_s)")
  done
  echo "$(median "${t[@]}") $(median "${p[@]}")"
}

infer_pair() {  # model input batch -> "telar torch" median latency ms
  local model=$1 input=$2 batch=$3 t=() p=()
  for r in $(seq "$repeats"); do
    t+=("$("$telar" infer --model "$model" --input "$input" --batch "$batch" --threads "$threads" \
        --repeats 30 --json | json_field latency_ms_median)")
    p+=("$("$py" bench/peer/torch_infer.py --model "$model" --input "$input" --batch "$batch" \
        --threads "$threads" --repeats 30 | json_field latency_ms_median)")
  done
  echo "$(median "${t[@]}") $(median "${p[@]}")"
}

echo "telar vs PyTorch $("$py" -c 'import torch; print(torch.__version__)'), $threads threads, median of $repeats, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-48s %12s %12s %8s %s\n' "benchmark" "telar" "pytorch" "ratio" "goal"
read -r t p <<<"$(train_pair mlp:784-256-128-10 "$mlp_batches")"
printf '%-48s %12.0f %12.0f %7.2fx %s\n' "MLP 784-256-128-10 train, batch 128 (samples/s)" "$t" "$p" "$("$py" -c "print($t/$p)")" ">= 10x"
read -r t p <<<"$(train_pair mnist_cnn "$cnn_batches")"
printf '%-48s %12.0f %12.0f %7.2fx %s\n' "seed-001 CNN train, batch 128 (samples/s)" "$t" "$p" "$("$py" -c "print($t/$p)")" ">= 3x"
read -r t p <<<"$(infer_pair mobilenet_v1 3x224x224 1)"
printf '%-48s %12.3f %12.3f %7.2fx %s\n' "MobileNetV1 224 batch 1 latency (ms)" "$t" "$p" "$("$py" -c "print($t/$p)")" "<= 0.8x"

[ "$no_ort" = 1 ] && exit 0
ort_dir=$(bench/peer/install_ort.sh)
export NODE_PATH="$ort_dir/node_modules"
ort_version=$(node -e "console.log(require('onnxruntime-node').env.versions.common)")

# file zoo-model input batch threads -> "telar ort torch" median latency ms, alternating runs
peer_triple() {
  local file=$1 model=$2 input=$3 batch=$4 n=$5 t=() o=() p=()
  for r in $(seq "$repeats"); do
    t+=("$("$telar" infer --model "$file" --batch "$batch" --threads "$n" --repeats "$runs_per" \
        --json | json_field latency_ms_median)")
    o+=("$(node bench/peer/ort_infer.js "$file" --input "$input" --batch "$batch" \
        --threads "$n" --repeats "$runs_per" | json_field latency_ms_median)")
    p+=("$("$py" bench/peer/torch_infer.py --model "$model" --input "$input" --batch "$batch" \
        --threads "$n" --repeats "$runs_per" | json_field latency_ms_median)")
  done
  echo "$(median "${t[@]}") $(median "${o[@]}") $(median "${p[@]}")"
}

busy_pid=""
stop_busy() { [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; busy_pid=""; }
trap 'stop_busy; rm -rf "$tmp"' EXIT

thread_counts="1 $threads"
[ "$threads" = 1 ] && thread_counts=1
for load in quiet busy; do
  if [ "$load" = busy ]; then
    ( while :; do :; done ) &  # one competing busy process
    busy_pid=$!
  fi
  for n in $thread_counts; do
    echo
    echo "telar vs ONNX Runtime $ort_version and PyTorch (telar and ORT run the same PyTorch-exported file), $n thread(s), $load, median of $repeats, load $(cut -d' ' -f1-3 /proc/loadavg)"
    printf '%-36s %10s %12s %10s %10s %10s %s\n' "inference latency (ms)" "telar" "onnxruntime" "pytorch" "t/ORT" "t/torch" "goal"
    for row in "mobilenet_v1 3x224x224 1" "mobilenet_v1 3x224x224 32" "resnet18 3x224x224 1" \
               "resnet18 3x224x224 32" "mnist_cnn 1x28x28 1" "mnist_cnn 1x28x28 32"; do
      read -r model input batch <<<"$row"
      file="$tmp/$model-$input.onnx"
      [ -f "$file" ] || "$py" bench/peer/torch_export.py --model "$model" --input "$input" --out "$file" 2>/dev/null
      read -r t o p <<<"$(peer_triple "$file" "$model" "$input" "$batch" "$n")"
      goal="<= 0.8x ORT"
      { [ "$model" = mnist_cnn ] || { [ "$model" = resnet18 ] && [ "$batch" = 32 ]; }; } && goal="-"
      printf '%-36s %10.3f %12.3f %10.3f %9.2fx %9.2fx %s\n' "$model $input batch $batch" "$t" "$o" "$p" \
        "$("$py" -c "print($t/$o)")" "$("$py" -c "print($t/$p)")" "$goal"
    done
  done
  stop_busy
done
