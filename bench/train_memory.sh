#!/usr/bin/env bash
# Training memory and throughput, telar against PyTorch (and optionally a second telar build,
# e.g. the commit before a change), side by side in one run: one epoch over N random images of
# the model's input (`telar train --data synthetic:N:SHAPE:10`; bench/peer/torch_train_memory.py
# the same in PyTorch 1.13), each run's peak resident memory (the whole process, the data set
# included) and training samples/s, alternating, best memory and median samples/s of the repeats.
#   bench/train_memory.sh --model resnet18 --input 3x224x224 [--batch 32] [--samples 512]
#                         [--threads 2] [--repeats 2] [--baseline OTHER_TELAR]
set -euo pipefail
cd "$(dirname "$0")/.."
model="" input="" batch=32 samples=512 threads=2 repeats=2 baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "train_memory.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -n "$model" ] && [ -n "$input" ] || { echo "train_memory.sh: give --model and --input (see --help)" >&2; exit 2; }
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "train_memory.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
[ -z "$baseline" ] || [ -x "$baseline" ] || { echo "train_memory.sh: --baseline $baseline is not an executable" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "train_memory.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$model $input, batch $batch, $samples images, $threads threads, $repeats repeats"
run_telar() {  # name binary
  /usr/bin/time -f %M -o "$tmp/rss" "$2" train --model "$model" --input "$input" \
    --data "synthetic:$samples:$input:10" --batch-size "$batch" --epochs 1 \
    --backend "cpu:threads=$threads" --out "$tmp/run" --overwrite >"$tmp/log" 2>&1 ||
    { tail -3 "$tmp/log"; exit 1; }
  /usr/bin/python3 -c "import json,sys; d=json.load(open('$tmp/run/run.json'))['result']
print('$1', d['samples_per_s'], int(open('$tmp/rss').read()) / 1024)" >>"$tmp/results"
}
for ((r = 0; r < repeats; r++)); do
  run_telar telar "$telar"
  [ -z "$baseline" ] || run_telar baseline "$baseline"
  /usr/bin/python3 bench/peer/torch_train_memory.py --model "$model" --input "$input" \
    --samples "$samples" --batch-size "$batch" --threads "$threads" |
    /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print('pytorch', d['samples_per_s'], d['peak_mib'])" >>"$tmp/results"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$tmp/results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, rate, mib = line.split()
    runs.setdefault(name, []).append((float(rate), float(mib)))
torch_mib = min(m for _, m in runs["pytorch"])
torch_rate = statistics.median(r for r, _ in runs["pytorch"])
print(f"{'':10} {'peak MiB':>10} {'samples/s':>10} {'memory / PyTorch':>17} {'speed / PyTorch':>16}")
for name in ("telar", "baseline", "pytorch"):
    if name not in runs:
        continue
    mib = min(m for _, m in runs[name])
    rate = statistics.median(r for r, _ in runs[name])
    print(f"{name:10} {mib:10.0f} {rate:10.1f} {mib / torch_mib:16.2f}x {rate / torch_rate:15.2f}x")
PY
