#!/usr/bin/env bash
# One model, telar against ONNX Runtime (and optionally a second telar build, e.g. the commit
# before a change), alternating single runs, on the same PyTorch-exported file: a minute where
# bench/peer_compare.sh takes twenty-four. Each run is `telar infer` / bench/peer/ort_infer.js
# with 30 timed runs (as peer_compare.sh); the figure is the median over the repeats.
#   bench/ort_pair.sh --model resnet18 --input 3x224x224 [--batch 1] [--threads 2]
#                     [--repeats 9] [--busy] [--baseline OTHER_TELAR]
# --model: a peer model of bench/peer/torch_models.py (mobilenet_v1, resnet18, mnist_cnn, vit: a
# ViT-B/16 written batch-first, vit:DIM-HEADS-DEPTH-PATCH another size ...) or
# any torchvision classifier or segmentation model as torchvision:NAME (torchvision:efficientnet_b0,
# torchvision:fcn_resnet50; 1000 classes, 21 for segmentation).
# --busy: one competing busy process for the whole run (killed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
model="" input="" batch=1 threads=2 repeats=9 busy=0 baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --busy) busy=1; shift ;;
    --baseline) baseline=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "ort_pair.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$model" ] && [ -n "$input" ] || { echo "ort_pair.sh: give --model and --input (see --help)" >&2; exit 2; }
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "ort_pair.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "ort_pair.sh: --baseline $baseline is not an executable" >&2; exit 2; }
py=/usr/bin/python3
tmp=$(mktemp -d)
busy_pid=""
trap '[ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
file="$tmp/${model//:/_}-$input.onnx"
"$py" bench/peer/torch_export.py --model "$model" --input "$input" --out "$file" 2>/dev/null
ort_dir=$(bench/peer/install_ort.sh)
export NODE_PATH="$ort_dir/node_modules"
median_ms() { "$py" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['latency_ms_median'])"; }
if [ "$busy" = 1 ]; then
  "$py" -c "while True: pass" &
  busy_pid=$!
fi
echo "$model $input batch $batch, $threads threads, $repeats alternating runs$([ "$busy" = 1 ] && echo ", one busy process"), load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$repeats"); do
  t=$("$telar" infer --model "$file" --batch "$batch" --threads "$threads" --repeats 30 --json | median_ms)
  b=-
  [ -z "$baseline" ] || b=$("$baseline" infer --model "$file" --batch "$batch" --threads "$threads" --repeats 30 --json | median_ms)
  o=$(node bench/peer/ort_infer.js "$file" --input "$input" --batch "$batch" --threads "$threads" --repeats 30 | median_ms)
  echo "$t $b $o"
done | "$py" -c "
import statistics as st, sys
rows = [line.split() for line in sys.stdin]
for r in rows: print('  run ms: telar', r[0], ' baseline', r[1], ' ORT', r[2])
t = st.median(float(r[0]) for r in rows); o = st.median(float(r[2]) for r in rows)
line = f'median: telar {t:.3f} ms, ORT {o:.3f} ms, telar/ORT {t / o:.3f}x'
if rows[0][1] != '-':
    b = st.median(float(r[1]) for r in rows)
    line += f'; baseline {b:.3f} ms, baseline/ORT {b / o:.3f}x'
print(line)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
