#!/usr/bin/env bash
# int8 side by side: telar's fp32 and int8 (telar quantize) against ONNX Runtime running the
# same models exported from telar, fp32 and int8 QDQ (telar export of the quantized model), on
# MobileNetV1 and ResNet-18 at 224x224, batch 1 and 32, one run of the script. ONNX Runtime is
# npm's onnxruntime-node, installed into a cache folder by bench/peer/install_ort.sh on first use.
# The models are trained one epoch on synthetic 224x224 data and calibrated on it: latency, not
# accuracy, is measured here (docs/quantize.md has the accuracy on Fashion-MNIST).
#   bench/int8_compare.sh [--threads N] [--duration S]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc)
duration=3
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "int8_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "int8_compare.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
command -v node >/dev/null || { echo "int8_compare.sh: node is not installed (apt-get install nodejs npm)" >&2; exit 2; }
py=/usr/bin/python3
modules="$(bench/peer/install_ort.sh)/node_modules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=synthetic:64:3x224x224:10

json_field() { "$py" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
ort_ms() {  # file batch -> median latency ms
  local repeats=200
  [ "$2" -gt 1 ] && repeats=15
  NODE_PATH="$modules" node bench/peer/ort_infer.js "$1" --input 3x224x224 --batch "$2" \
    --threads "$threads" --repeats "$repeats" | json_field latency_ms_median
}

echo "telar vs ONNX Runtime, fp32 and int8, $threads threads, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %5s %12s %12s %12s %12s %10s %10s\n' model batch "ort fp32" "telar fp32" "ort int8" \
  "telar int8" "int8/fp32" "telar/ort"
for model in mobilenet_v1 resnet18; do
  run="$tmp/$model"
  "$telar" train --model "$model" --input 3x224x224 --data "$data" --epochs 1 --batch-size 16 \
    --threads "$threads" --quiet --out "$run" >/dev/null
  "$telar" quantize --checkpoint "$run" --data "$data" --calibration-batches 4 --batch-size 16 \
    --no-accuracy --threads "$threads" --out "$run-int8" >/dev/null 2>&1
  "$telar" export --checkpoint "$run" --out "$run.onnx" >/dev/null
  "$telar" export --checkpoint "$run-int8" --out "$run-int8.onnx" >/dev/null
  points=$("$telar" bench --checkpoint "$run-int8" --precision fp32,int8 --batch 1,32 \
    --duration "$duration" --threads "$threads" --json 2>/dev/null | tail -n 1)
  for batch in 1 32; do
    read -r tf ti < <("$py" -c "
import json, sys
p = json.loads(sys.argv[1])['points']
ms = {(x['precision'], x['batch']): x['latency_ms_median'] for x in p}
print(ms[('fp32', $batch)], ms[('int8', $batch)])" "$points")
    of=$(ort_ms "$run.onnx" "$batch")
    oi=$(ort_ms "$run-int8.onnx" "$batch")
    "$py" -c "
import sys
m, b, of, tf, oi, ti = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
print(f'{m:<14} {b:>5} {of:>12.3f} {tf:>12.3f} {oi:>12.3f} {ti:>12.3f} {tf / ti:>9.2f}x {ti / oi:>9.2f}x')
" "$model" "$batch" "$of" "$tf" "$oi" "$ti"
  done
done
echo "int8/fp32: telar's int8 speed-up over its fp32; telar/ort: telar int8 latency over ONNX Runtime int8's (below 1: telar faster). load after: $(cut -d' ' -f1-3 /proc/loadavg)"
