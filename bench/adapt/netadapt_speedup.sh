#!/usr/bin/env bash
# Seed 003's acceleration of NetAdapt, end to end (issue 22's goal: >= 37x with the final accuracy
# within 1 pp): `telar adapt --reference` (NetAdapt's algorithm in full: linear channel search,
# the look-up table's cubic RBF refitted at every miss, every candidate fine-tuned) against
# `--hybrid 30 --score naswot --search bisection --lut-interpolation rbf-prefit` (`--score`: the
# hybrid's training-free score, e.g. grad-norm), side by side in one run, on the same trained
# network, look-up table, data and options. Trains the network first (unless --checkpoint) and
# builds its table on the target (unless --lut); neither is counted on either side. Prints each
# run's wall time, iterations, resource reached and test accuracy, then the speed-up and the
# accuracy difference.
#   bench/adapt/netadapt_speedup.sh [--checkpoint RUN] [--lut FILE] [--model alexnet]
#       [--input 1x64x64] [--delta 0.05] [--budget 0.5] [--short-term-iterations 20]
#       [--long-term-epochs 1] [--max-iterations N] [--score naswot] [--tune-chosen]
#       [--only fast|reference] [--out DIR]
# (--tune-chosen: the hybrid fine-tunes the candidate each score-chosen iteration keeps.)
set -euo pipefail
cd "$(dirname "$0")/../.."
checkpoint="" lut="" model=alexnet input=1x64x64 delta=0.05 budget=0.5 short=20 long=1
max_iterations=100 score=naswot only="" out="" tune=()
while [ $# -gt 0 ]; do
  case "$1" in
    --checkpoint) checkpoint=$2; shift 2 ;;
    --lut) lut=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --input) input=$2; shift 2 ;;
    --delta) delta=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --short-term-iterations) short=$2; shift 2 ;;
    --long-term-epochs) long=$2; shift 2 ;;
    --max-iterations) max_iterations=$2; shift 2 ;;
    --score) score=$2; shift 2 ;;
    --tune-chosen) tune=(--tune-chosen); shift ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n 2,14p "$0"; exit 0 ;;
    *) echo "netadapt_speedup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case "$only" in ""|fast|reference) ;; *) echo "netadapt_speedup.sh: --only fast or reference" >&2; exit 2 ;; esac
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "netadapt_speedup.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
if [ -z "$out" ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$checkpoint" ]; then
  checkpoint=$out/trained
  echo "training $model at $input on Fashion-MNIST (2 epochs, Adam 1e-4) ..."
  "$telar" train --model "$model" --input "$input" --data fashion-mnist --epochs 2 \
    --optimizer adam --lr 0.0001 --out "$checkpoint" --overwrite | tail -2
fi
if [ -z "$lut" ]; then
  lut=$out/cpu.lut
  echo "building the look-up table on cpu ..."
  start=$(date +%s.%N)
  "$telar" lut build --checkpoint "$checkpoint" --target cpu --out "$lut" | tail -1
  echo "table built in $(python3 -c "print(f'{$(date +%s.%N) - $start:.0f}')") s"
fi
common=(--checkpoint "$checkpoint" --lut "$lut" --budget "$budget" --delta "$delta"
        --short-term-iterations "$short" --long-term-epochs "$long"
        --max-iterations "$max_iterations" --overwrite --json)
run() {  # name, options...
  local name=$1; shift
  echo "telar adapt ${common[*]} $* --out $out/$name"
  echo "  (load average before: $(cut -d' ' -f1-3 /proc/loadavg))"
  "$telar" adapt "${common[@]}" "$@" --out "$out/$name" >"$out/$name.log" 2>&1 ||
    { tail -5 "$out/$name.log"; exit 1; }
  echo "  (load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
}
[ "$only" = reference ] || run fast --hybrid 30 --score "$score" "${tune[@]}" --search bisection --lut-interpolation rbf-prefit
[ "$only" = fast ] || run reference --reference
python3 - "$out" "$only" <<'PY'
import json, os, sys
out, only = sys.argv[1], sys.argv[2]
runs = {}
for name in ("fast", "reference"):
    f = os.path.join(out, name, "run.json")
    if os.path.exists(f):
        runs[name] = json.load(open(f))["result"]
for name, r in runs.items():
    print(f"{name:>9}: {r['seconds']:8.1f} s, {r['iterations']} iterations, "
          f"{r['adapted_resource'] / r['original_resource']:.1%} of {r['original_resource']:.4g} "
          f"{r['unit']} ({'met' if r['budget_met'] else 'not met: ' + r['stopped']}), "
          f"test accuracy {r['test_accuracy']:.4f} (original {r['original_test_accuracy']:.4f})")
if len(runs) == 2:
    f, ref = runs["fast"], runs["reference"]
    print(f"speed-up {ref['seconds'] / f['seconds']:.1f}x (goal 37x); test accuracy "
          f"{100 * (f['test_accuracy'] - ref['test_accuracy']):+.2f} pp against the reference "
          f"(goal within 1 pp)")
PY
