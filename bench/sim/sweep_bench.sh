#!/usr/bin/env bash
# A sweep of N small cases (default 1000: dense GEMMs, FCs and convolutions of varied shapes and
# tiles on MAERI arrays of 64 and 128 multipliers, as a design-space script would run them),
# timed two ways in one run: `telar sim --cases FILE` (one process, every core) and one `telar
# sim` process per case, as STONNE's scripts call it (the second on the first --sample cases
# only, scaled to N). Their figures must agree: the script compares the cycles of the sampled
# cases.
#   bench/sim/sweep_bench.sh [--cases N] [--sample K] [--jobs J]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=1000
sample=100
jobs=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) n=$2; shift 2 ;;
    --sample) sample=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "sweep_bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "sweep_bench.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3

"$py" - "$n" > "$tmp/cases.txt" <<'PY'
import sys
n = int(sys.argv[1])
lines = []
i = 0
while len(lines) < n:
    ms = (64, 128)[i % 2]
    kind = i % 3
    if kind == 0:
        m, nn, k = 8 + (i % 5) * 8, 8 + (i % 7) * 4, 32 + (i % 4) * 32
        tk = (4, 8, 16)[i % 3]
        lines.append(f"-DenseGEMM -M={m} -N={nn} -K={k} -num_ms={ms} -dn_bw=16 -rn_bw=16 "
                     f"-T_M=1 -T_N=1 -T_K={tk}")
    elif kind == 1:
        nn, k = 16 + (i % 6) * 16, 64 + (i % 3) * 64
        lines.append(f"-FC -M=1 -N={nn} -K={k} -num_ms={ms} -dn_bw=16 -rn_bw=16 -T_K=16 -T_N=2")
    else:
        c, kk, x = 4 + (i % 3) * 4, 4 + (i % 4) * 4, 6 + (i % 5)
        lines.append(f"-CONV -R=3 -S=3 -C={c} -K={kk} -X={x} -Y={x} -num_ms={ms} -dn_bw=16 "
                     f"-rn_bw=16 -T_R=3 -T_S=3 -T_C=1 -T_K=1")
    i += 1
print("\n".join(lines))
PY

echo "telar sim: $n small cases, $(nproc) cores, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
"$telar" sim --cases "$tmp/cases.txt" --jobs "$jobs" --out "$tmp/sweep" --json > "$tmp/sweep.out"
sweep_s=$("$py" -c "print($(date +%s.%N) - $start)")
mkdir -p "$tmp/alone"
head -n "$sample" "$tmp/cases.txt" > "$tmp/sample.txt"
start=$(date +%s.%N)
k=0
while read -r line; do
  k=$((k + 1))
  # shellcheck disable=SC2086
  "$telar" sim $line --out "$tmp/alone" -layer_name="c$k" --json | tail -n 1 > "$tmp/alone/$k.json"
done < "$tmp/sample.txt"
alone_s=$("$py" -c "print($(date +%s.%N) - $start)")
"$py" - "$tmp" "$sample" "$n" "$sweep_s" "$alone_s" <<'PY'
import csv, json, sys
tmp, sample, n, sweep_s, alone_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
rows = list(csv.DictReader(open(f"{tmp}/sweep/summary.csv")))
assert len(rows) == n, f"{len(rows)} rows for {n} cases"
bad = [r for r in rows if r["output"] != "correct"]
assert not bad, f"{len(bad)} cases failed: {bad[0]}"
for k in range(1, sample + 1):
    one = json.loads(open(f"{tmp}/alone/{k}.json").read())
    assert int(rows[k - 1]["cycles"]) == one["cycles"], (k, rows[k - 1]["cycles"], one["cycles"])
per_process = alone_s / sample
print(f"{'one process, --cases':40s} {sweep_s:9.2f} s  {n / sweep_s:9.0f} cases/s")
print(f"{'a process per case (' + str(sample) + ' timed, x' + str(n // sample) + ')':40s} "
      f"{per_process * n:9.2f} s  {1 / per_process:9.0f} cases/s")
print(f"speed-up {per_process * n / sweep_s:.1f}x; cycles of the {sample} sampled cases identical")
PY
