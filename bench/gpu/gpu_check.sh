#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: the GPU tests, and the GPU figures of docs/cuda.md side by
# side in one run (telar on cuda:0 against PyTorch on the same GPU, the CPU, and CPU+GPU
# data-parallel groups), with a summary table last.
#   bench/gpu/gpu_check.sh [SECTION...]     sections: tests peer hybrid ddp (default: all)
# Environment: BUILD (default build/release: telar and the test binaries), FMNIST (default
# /usr/share/datasets/fashion-mnist), PYTHON (default python3, with torch for the peer),
# LOG (default: a temporary file, printed at the end).
set -uo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in -h|--help) sed -n 2,8p "$0"; exit 0 ;; esac
build=${BUILD:-build/release}
fmnist=${FMNIST:-/usr/share/datasets/fashion-mnist}
py=${PYTHON:-python3}
telar=$build/telar
[ -x "$telar" ] || { echo "gpu_check.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
[ -f "$fmnist/train-images-idx3-ubyte.gz" ] || { echo "gpu_check.sh: no Fashion-MNIST in $fmnist; set FMNIST" >&2; exit 2; }
runs=$(mktemp -d)
log=${LOG:-$runs/log}
trap 'rm -rf "$runs"' EXIT
say() { echo "=== $* ($(date +%T))" | tee -a "$log"; }
check() { local t=$1; shift; say "$*"; timeout "$t" "$@" >> "$log" 2>&1; echo "rc=$?" | tee -a "$log"; }
train() {  # NAME TIMEOUT ARGS...: one telar train run; its JSON line goes to $runs/NAME.json
  local n=$1 t=$2; shift 2; say "train $n: $*"
  timeout "$t" "$telar" train --quiet --json --out "$runs/$n" "$@" 2>> "$log" | tail -1 > "$runs/$n.json"
  echo "rc=${PIPESTATUS[0]}" | tee -a "$log"
}
cnn=(--model mnist_cnn --data "fashion-mnist:$fmnist" --momentum 0.9 --lr 0.05)
mlp=(--model mlp:784-256-10 --data "fashion-mnist:$fmnist" --momentum 0.9 --lr 0.05 --epochs 1
     --batch-size 128)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
for section in ${@:-tests peer hybrid ddp}; do case $section in
tests)
  check 300 "$build/tests/backend/test_cuda_backend"
  check 120 "$build/tests/e2e/test_e2e_cuda"
  check 120 "$build/tests/dist/test_dist" --gtest_filter='Nccl*'
  check 120 "$build/tests/e2e/test_e2e_energy"
  ;;
peer)  # two epochs each; the figure to quote is the last epoch's (the first makes plans)
  for b in 128 1024; do
    say "torch b=$b"
    timeout 300 "$py" bench/peer/torch_train.py --model mnist_cnn --device cuda --data "$fmnist" \
      --epochs 2 --batch-size "$b" 2>> "$log" | tail -1 > "$runs/torch_b$b.json"
    train telar_gpu_b$b 300 "${cnn[@]}" --backend cuda:0 --epochs 2 --batch-size "$b"
  done
  ;;
hybrid)  # the GPU alone, the CPU alone (the cores a CPU worker gets beside it), both together
  half=$(( $(nproc) / 2 ))
  for b in 128 1024 4096; do
    train gpu_b$b 300 "${cnn[@]}" --backend cuda:0 --epochs 2 --batch-size "$b"
    train cpu${half}_b$b 300 "${cnn[@]}" --backend cpu:threads=$half --epochs 2 --batch-size "$b"
    train gpu+cpu_b$b 300 "${cnn[@]}" --workers cuda:0,cpu --balance auto --epochs 2 --batch-size "$b"
  done
  ;;
ddp)  # the same global batch on one GPU, two GPU workers, a GPU and a CPU worker: same losses
  for n in 20 200; do
    train mlp${n}_gpu 120 "${mlp[@]}" --limit-batches $n --backend cuda:0
    train mlp${n}_cpu 120 "${mlp[@]}" --limit-batches $n --backend cpu
    train mlp${n}_2gpu 120 "${mlp[@]}" --limit-batches $n --workers cuda:0,cuda:0
    train mlp${n}_gpu+cpu 120 "${mlp[@]}" --limit-batches $n --workers cuda:0,cpu --balance weights:3/1
    train mlp${n}_nccl1 120 "${mlp[@]}" --limit-batches $n --workers cuda:0 --communicator nccl
  done
  ;;
*) echo "gpu_check.sh: unknown section $section (tests, peer, hybrid, ddp)" >&2; exit 2 ;;
esac; done
grep -hE "^\[  (PASSED|FAILED|SKIPPED)|rc=|warning|error" "$log"
"$py" - "$runs" <<'PY'
import glob, json, os, sys
print(f"{'run':16} {'samples/s':>10} {'last epoch':>10} {'test acc':>8} {'train loss':>20} {'GPU J':>7}  shares")
for f in sorted(glob.glob(os.path.join(sys.argv[1], '*.json'))):
    try:
        j = json.load(open(f))
    except Exception:
        print(f"{os.path.basename(f)[:-5]:16} (no result)"); continue
    loss = j.get('train', {}).get('loss', '')
    acc = j.get('test', {}).get('accuracy', j.get('test_accuracy', 0))
    e = j.get('energy', {}); dp = j.get('data_parallel', {})
    print(f"{os.path.basename(f)[:-5]:16} {j.get('samples_per_s', 0):10.0f} "
          f"{j.get('epoch_samples_per_s', [0])[-1]:10.0f} {acc:8.4f} {loss!r:>20} "
          f"{e.get('used_joules', 0):7.1f}  {dp.get('shares', '')}")
PY
