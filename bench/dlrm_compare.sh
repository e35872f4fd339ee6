#!/usr/bin/env bash
# Side-by-side DLRM speed of telar and PyTorch 1.13 (Debian's python3-torch) on this machine, same
# threads, one run of the script: each figure is the median of REPEATS alternating runs. Each run
# reports its median call and its fastest call; both are shown ("median" and "best"): on a
# machine shared with other work the median mostly measures the scheduler (calls stretch to
# whole scheduler ticks), the fastest call measures the work.
#   bench/dlrm_compare.sh [--threads N] [--repeats R] [--quick]
# --quick: smaller tables and fewer calls (a smoke run for tests), not for quoting.
set -euo pipefail
cd "$(dirname "$0")/.."
threads=$(nproc)
repeats=3
calls=50
rows=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --quick) repeats=1; calls=3; rows=10000; shift ;;
    -h|--help) sed -n 2,7p "$0"; exit 0 ;;
    *) echo "dlrm_compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "dlrm_compare.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

json_field() { "$py" -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
median() { "$py" -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

# The two workloads of issue 5, with the reference's flags (both sides take the same ones).
t5="$rows-$rows-$rows-$rows-$rows"
inference=(--arch-sparse-feature-size=32 "--arch-embedding-size=$t5" --arch-mlp-bot=128-64-64-32
           --arch-mlp-top=128-64-1 --mini-batch-size=2048 --num-indices-per-lookup=50
           --num-indices-per-lookup-fixed)
bag=(--arch-sparse-feature-size=32 "--arch-embedding-size=$rows" --arch-mlp-bot=128-64-64-32
     --arch-mlp-top=128-64-1 --mini-batch-size=4096 --num-indices-per-lookup=100
     --num-indices-per-lookup-fixed)

pair() {  # benchmark field flags... -> "telar-median torch-median telar-best torch-best"
  local bench=$1 field=$2 t=() p=() tb=() pb=() out
  shift 2
  for r in $(seq "$repeats"); do
    out=$("$telar" dlrm --benchmark "$bench" "$@" --threads "$threads" --repeats "$calls" \
          --quiet --json --out "$tmp/run$r")
    t+=("$(json_field "$field" <<<"$out")")
    tb+=("$(json_field "${field}_best" <<<"$out")")
    out=$("$py" bench/peer/torch_dlrm.py --benchmark "$bench" "$@" --threads "$threads" \
          --repeats "$calls")
    p+=("$(json_field "$field" <<<"$out")")
    pb+=("$(json_field "${field}_best" <<<"$out")")
  done
  echo "$(median "${t[@]}") $(median "${p[@]}") $(median "${tb[@]}") $(median "${pb[@]}")"
}
row() {  # label format telar torch goal
  printf "%-64s %12$2 %12$2 %7.2fx %s\n" "$1" "$3" "$4" "$("$py" -c "print($3/$4)")" "$5"
}

echo "telar vs PyTorch $("$py" -c 'import torch; print(torch.__version__)'), $threads threads, median of $repeats, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-64s %12s %12s %8s %s\n' "benchmark" "telar" "pytorch" "ratio" "goal"
read -r t p tb pb <<<"$(pair inference samples_per_s "${inference[@]}")"
row "DLRM inference 5x${rows}x32, batch 2048, 50 lookups, samples/s: median" .0f "$t" "$p" ">= 1.5x"
row "                                                                 best" .0f "$tb" "$pb" ">= 1.5x"
read -r t p tb pb <<<"$(pair embedding-bag effective_gb_per_s "${bag[@]}")"
row "EmbeddingBag ${rows}x32, batch 4096, 100 lookups, GB/s: median" .2f "$t" "$p" ">= 1.3x"
row "                                                         best" .2f "$tb" "$pb" ">= 1.3x"
