#!/usr/bin/env bash
# Data-parallel training throughput, side by side in one run (bench/dist/README in docs/dist.md):
#   1. two 1-thread workers vs one 1-thread worker, seed-001 CNN on Fashion-MNIST, same global
#      batch: throughput ratio (goal >= 1.8x) and final test accuracy after EPOCHS epochs
#      (goal: within 0.5 percentage points);
#   2. one worker slowed 4x (cpu:threads=1:slowdown=4) beside a normal one: --balance equal,
#      auto and dynamic against the ideal, the sum of the two workers' solo throughputs
#      (goal for auto: >= 90%); the solo runs use --balance auto too, so that, as in the pairs,
#      their plans are made in the warm-up and the timed training is steady state on both sides;
#   3. (if mpirun exists) two MPI ranks on this machine vs two threads.
# Every figure is training samples/s in steady state: each run trains two epochs (dynamic:
# three) of N batches and the figure is its last epoch's (the first also makes the kernels'
# plans and touches fresh memory, a fixed cost that a short run would count against whichever
# configuration pays more of it; the warm-up and evaluation are outside the epochs), the best of
# REPEATS alternating runs: other processes on a shared machine only ever slow a run down.
# The goals' ratios are also given paired: each repeat's own ratio (its runs ran within
# minutes of each other), median over the repeats. The "capacity" row runs two independent
# 1-thread trainings at once: what the machine gives two threads at that moment (1.0x on a
# saturated machine).
#   bench/dist/dist_bench.sh [--epochs E] [--batches N] [--batch-size B] [--repeats R]
#                            [--skip-accuracy] [--skip-hetero]
set -euo pipefail
cd "$(dirname "$0")/../.."
epochs=2 batches=60 batch_size=128 repeats=3 accuracy=1 hetero=1
while [ $# -gt 0 ]; do
  case "$1" in
    --epochs) epochs=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --batch-size) batch_size=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --skip-accuracy) accuracy=0; shift ;;
    --skip-hetero) hetero=0; shift ;;
    -h|--help) sed -n 2,21p "$0"; exit 0 ;;
    *) echo "dist_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "dist_bench.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--model mnist_cnn --data fashion-mnist --batch-size "$batch_size" --momentum 0.9 --lr 0.05
        --quiet --json --no-energy)
field() {  # json-line field path... -> value
  python3 -c "
import json,sys
j=json.loads(sys.stdin.read().splitlines()[-1])
for k in sys.argv[1:]: j=j[int(k)] if k.lstrip('-').isdigit() else j[k]
print(j)" "$@"
}
run() {  # name extra-args... -> writes $tmp/name.N.json
  local name=$1; shift
  local n=0
  while [ -e "$tmp/$name.$n.json" ]; do n=$((n + 1)); done
  "$telar" train "${common[@]}" --out "$tmp/run-$name-$n" "$@" 2>"$tmp/$name.$n.err" | tail -1 >"$tmp/$name.$n.json" ||
    { echo "dist_bench.sh: $name failed:" >&2; cat "$tmp/$name.$n.err" >&2; exit 1; }
}
median() {  # name field... -> median over repeats
  local name=$1; shift
  for f in "$tmp/$name".*.json; do field "$@" <"$f"; done | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}
best() {  # name field... -> maximum over repeats
  local name=$1; shift
  for f in "$tmp/$name".*.json; do field "$@" <"$f"; done | sort -g | tail -1
}
capacity() {  # two independent one-thread runs at once -> their summed samples/s
  local a b
  "$telar" train "${common[@]}" --epochs 2 --limit-batches "$batches" --backend cpu:threads=1 \
    --out "$tmp/cap-a-$1" 2>/dev/null | tail -1 >"$tmp/capa.$1.json" &
  a=$!
  "$telar" train "${common[@]}" --epochs 2 --limit-batches "$batches" --backend cpu:threads=1 \
    --out "$tmp/cap-b-$1" 2>/dev/null | tail -1 >"$tmp/capb.$1.json"
  wait $a
  python3 -c "
import json
print(sum(json.loads(open(f).read())['epoch_samples_per_s'][-1] for f in ['$tmp/capa.$1.json', '$tmp/capb.$1.json']))" >"$tmp/cap.$1.txt"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores" >&2

# 1. Scaling at the same global batch (throughput: limited batches, alternating).
for r in $(seq "$repeats"); do
  run one --epochs 2 --limit-batches "$batches" --backend cpu:threads=1
  run two --epochs 2 --limit-batches "$batches" --workers cpu:threads=1,cpu:threads=1
  capacity "$r"
done
# 2. Heterogeneous pair: solo throughputs, then the pair under each balance.
slow=cpu:threads=1:slowdown=4
for r in $(seq "$repeats"); do
  [ "$hetero" = 1 ] || break
  run fast --epochs 2 --limit-batches "$batches" --workers cpu:threads=1 --balance auto
  run slow --epochs 2 --limit-batches "$((batches / 3))" --workers "$slow" --balance auto
  run equal --epochs 2 --limit-batches "$batches" --workers "cpu:threads=1,$slow" --balance equal
  run auto --epochs 2 --limit-batches "$batches" --workers "cpu:threads=1,$slow" --balance auto
  run dynamic --epochs 3 --limit-batches "$batches" --workers "cpu:threads=1,$slow" --balance dynamic
done
# 3. MPI ranks vs threads.
mpi=0
if command -v mpirun >/dev/null && "$telar" --version | grep -q "mpi=yes"; then
  mpi=1
  for r in $(seq "$repeats"); do
    OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
      mpirun --allow-run-as-root --oversubscribe -np 2 "$telar" train "${common[@]}" --epochs 2 \
      --limit-batches "$batches" --workers mpi:cpu:threads=1 --out "$tmp/run-mpi-$r" 2>"$tmp/mpi.$r.err" |
      tail -1 >"$tmp/mpi.$r.json"
  done
fi
# Accuracy after whole epochs, same global batch.
if [ "$accuracy" = 1 ]; then
  run acc1 --epochs "$epochs" --backend cpu:threads=1
  run acc2 --epochs "$epochs" --workers cpu:threads=1,cpu:threads=1
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

one=$(best one epoch_samples_per_s -1) two=$(best two epoch_samples_per_s -1)
cap=$(sort -g "$tmp"/cap.*.txt | tail -1)
fast=0 slow_t=0 equal=0 auto=0 dyn=0 auto_warm=0 auto_share=0 dyn_share=0 dyn_last=0
if [ "$hetero" = 1 ]; then
  fast=$(best fast epoch_samples_per_s -1) slow_t=$(best slow epoch_samples_per_s -1)
  equal=$(best equal epoch_samples_per_s -1) auto=$(best auto epoch_samples_per_s -1)
  dyn=$(best dynamic samples_per_s)
  auto_warm=$(median auto data_parallel warmup_seconds)
  auto_share=$(median auto data_parallel shares 0)
  dyn_share=$(median dynamic data_parallel shares 0)
  dyn_last=$(best dynamic epoch_samples_per_s -1)
fi
mpi_t=""; [ "$mpi" = 1 ] && mpi_t=$(best mpi epoch_samples_per_s -1)
acc1="" acc2=""
if [ "$accuracy" = 1 ]; then acc1=$(median acc1 test accuracy); acc2=$(median acc2 test accuracy); fi
python3 - "$batch_size" "$batches" "$repeats" "$cap" "$one" "$two" "$fast" "$slow_t" "$equal" "$auto" "$dyn" \
  "$auto_warm" "$auto_share" "$dyn_share" "$mpi_t" "$acc1" "$acc2" "$epochs" "$dyn_last" "$tmp" <<'PY'
import json, statistics, sys
def per_round(name, figure=lambda j: j["epoch_samples_per_s"][-1]):  # each repeat's, in order
    out, i = [], 0
    while True:
        try:
            with open(f"{sys.argv[20]}/{name}.{i}.json") as f: out.append(figure(json.loads(f.read())))
        except FileNotFoundError: return out
        i += 1
b, n, r, cap = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
one, two, fast, slow, equal, auto, dyn, warm, ashare, dshare = map(float, sys.argv[5:15])
mpi, acc1, acc2, epochs = sys.argv[15], sys.argv[16], sys.argv[17], sys.argv[18]
dyn_last = float(sys.argv[19])
print(f"seed-001 CNN on Fashion-MNIST, global batch {b}, training samples/s (last of 2 epochs of {n} batches, best of {r})")
print(f"{'configuration':<52} {'samples/s':>10} {'ratio':>8}")
print(f"{'one worker, cpu:threads=1':<52} {one:>10.0f} {1.0:>7.2f}x")
print(f"{'capacity: two independent 1-thread runs at once':<52} {cap:>10.0f} {cap/one:>7.2f}x")
print(f"{'two workers, cpu:threads=1 x2 (threads)':<52} {two:>10.0f} {two/one:>7.2f}x   goal >= 1.80x")
if mpi:
    m = float(mpi)
    print(f"{'two MPI ranks, cpu:threads=1 each':<52} {m:>10.0f} {m/one:>7.2f}x   ({m/two:.2f} of threads)")
ideal = fast + slow
if ideal > 0:
    print()
    print(f"{'fast worker alone (cpu:threads=1)':<52} {fast:>10.0f}")
    print(f"{'slow worker alone (cpu:threads=1:slowdown=4)':<52} {slow:>10.0f}   {slow/fast:.3f} of fast")
    print(f"{'ideal pair (sum of the two)':<52} {ideal:>10.0f} {1.0:>7.2f}")
    print(f"{'pair, --balance equal':<52} {equal:>10.0f} {equal/ideal:>7.1%} of ideal")
    print(f"{'pair, --balance auto':<52} {auto:>10.0f} {auto/ideal:>7.1%} of ideal   goal >= 90%  (share of fast {ashare:.3f}, warm-up {warm:.1f} s)")
    print(f"{'pair, --balance dynamic (all 3 epochs)':<52} {dyn:>10.0f} {dyn/ideal:>7.1%} of ideal   (final share of fast {dshare:.3f})")
    print(f"{'pair, --balance dynamic, third epoch':<52} {dyn_last:>10.0f} {dyn_last/ideal:>7.1%} of ideal")
# The best of each configuration can come from different moments of a noisy machine; the runs of
# one repeat ran minutes apart at most, so their ratios, and the median over repeats, are paired.
print()
print(f"paired by repeat (median over {r} repeats of each repeat's own ratio):")
o, t = per_round("one"), per_round("two")
print(f"  two workers / one worker                {statistics.median(b/a for a, b in zip(o, t)):.2f}x   goal >= 1.80x")
if ideal > 0:
    f_, s_, a_ = per_round("fast"), per_round("slow"), per_round("auto")
    print(f"  auto / (fast alone + slow alone)        {statistics.median(c/(a+b) for a, b, c in zip(f_, s_, a_)):.1%}   goal >= 90%")
    # How well auto split the work, whatever the machine did between the solo runs and the
    # pair: the slowed worker's compute time over the fast one's in the same run (1.0: both
    # computed equally long, the best split; above: the slowed worker got too much).
    im = per_round("auto", lambda j: j["data_parallel"]["compute_seconds"][1] / j["data_parallel"]["compute_seconds"][0])
    print(f"  auto: slowed worker's compute time / fast worker's, per repeat: {', '.join(f'{x:.3f}' for x in im)}")
if acc1:
    a1, a2 = float(acc1), float(acc2)
    print()
    print(f"test accuracy after {epochs} epochs: one worker {a1:.4f}, two workers {a2:.4f}, "
          f"difference {abs(a1-a2)*100:.2f} pp (goal <= 0.5 pp)")
PY
