#!/usr/bin/env bash
# Start-up of telar as whole processes: `telar --version`, `telar models`, `telar sim` of a small
# case, and STONNE's two large simulation-speed cases (../shared/reference/README.md: FC
# M=128 N=80 K=1307 on 256 multipliers, 35.6 s in STONNE; CONV 5x5 64->192 31x31, 153 s), each
# run --runs times; wall time (median, min) and peak resident memory of each process, the large
# cases' speed against STONNE's wall time, and their cycles checked against STONNE's.
# With a baseline (another telar, e.g. the previous commit's), both run side by side: each
# round runs every case with one binary, then with the other.
#   bench/startup/startup_bench.sh [--runs N] [--baseline TELAR | --baseline-commit REV]
# --baseline-commit builds REV's telar (release, no tests) once into
# ~/.cache/telar/startup-baseline/REV (about 15 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=20
baseline=""
baseline_commit=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --baseline-commit) baseline_commit=$2; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "startup_bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
telar=${TELAR:-build/release/telar}
[ -x "$telar" ] || { echo "startup_bench.sh: $telar not built; run scripts/build.sh" >&2; exit 2; }
if [ -n "$baseline_commit" ]; then
  rev=$(git rev-parse --short "$baseline_commit")
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/telar/startup-baseline/$rev
  if [ ! -x "$cache/build/telar" ]; then
    echo "building telar at $rev into $cache (once) ..."
    rm -rf "$cache/src"
    mkdir -p "$cache"
    git worktree add --detach -f "$cache/src" "$rev" > /dev/null
    cmake -S "$cache/src" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release -DTELAR_BUILD_TESTS=OFF \
      -DTELAR_BUILD_BENCH=OFF > /dev/null
    cmake --build "$cache/build" --target telar -j "$(nproc)" > /dev/null
    git worktree remove --force "$cache/src"
  fi
  baseline=$cache/build/telar
fi
if [ -n "$baseline" ] && [ ! -x "$baseline" ]; then
  echo "startup_bench.sh: --baseline $baseline is not an executable" >&2
  exit 2
fi
echo "telar start-up: $runs runs per case, $(nproc) cores, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$runs" "$telar" "$baseline" <<'PY'
import json, os, shutil, statistics, subprocess, sys, tempfile, time

runs, telar, baseline = int(sys.argv[1]), sys.argv[2], sys.argv[3]
binaries = [("this", telar)] + ([("baseline", baseline)] if baseline else [])
fc = "-FC -M=128 -N=80 -K=1307 -num_ms=256 -dn_bw=128 -rn_bw=128 -T_K=64 -T_M=4 -T_N=1 -accumulation_buffer=1"
conv = ("-CONV -R=5 -S=5 -C=64 -K=192 -G=1 -N=1 -X=31 -Y=31 -strides=1 -T_R=5 -T_S=5 -T_C=4 "
        "-T_K=2 -T_G=1 -T_N=1 -T_X_=1 -T_Y_=1 -num_ms=256 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1")
small = "-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 -T_N=1"
# name, arguments (OUT replaced by a fresh folder), STONNE's wall time and cycles (or None)
cases = [
    ("telar --version", ["--version"], None, None),
    ("telar models", ["models"], None, None),
    ("telar sim, small GEMM", ["sim", "--out", "OUT", "--json"] + small.split(), None, None),
    ("telar sim, large FC", ["sim", "--out", "OUT", "--json"] + fc.split(), 35.6, 111840),
    ("telar sim, large CONV", ["sim", "--out", "OUT", "--json"] + conv.split(), 153.0, 1251552),
]
tmp = tempfile.mkdtemp()
samples = {(b, c[0]): [] for b, _ in binaries for c in cases}
cycles = {}
def run_once(binary, args):
    out = tempfile.mkdtemp(dir=tmp)
    argv = [binary] + [out if a == "OUT" else a for a in args]
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout = p.stdout.read()
    p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"startup_bench.sh: {' '.join(argv)} exited {p.returncode}")
    shutil.rmtree(out)
    return seconds, usage.ru_maxrss / 1024.0, stdout.decode()
for r in range(runs + 1):  # the first round warms the page cache and is not counted
    for b, path in binaries:
        for name, args, _, _ in cases:
            seconds, rss, out = run_once(path, args)
            if r == 0:
                if args[0] == "sim":
                    cycles[(b, name)] = json.loads(out.strip().splitlines()[-1])["cycles"]
                continue
            samples[(b, name)].append((seconds, rss))
shutil.rmtree(tmp)
def stats(b, name):
    xs = samples[(b, name)]
    return statistics.median(s for s, _ in xs) * 1e3, min(s for s, _ in xs) * 1e3, max(m for _, m in xs)
head = f"{'case':<24}" + "".join(f" | {b + ' median':>16} | {'min':>8} | {'peak RSS':>9}" for b, _ in binaries)
head += " | ratio" if baseline else ""
print(head)
for name, args, stonne_s, stonne_cycles in cases:
    row = f"{name:<24}"
    for b, _ in binaries:
        med, lo, rss = stats(b, name)
        row += f" | {med:>13.1f} ms | {lo:>5.1f} ms | {rss:>6.1f} MB"
    if baseline:
        row += f" | {stats('baseline', name)[0] / stats('this', name)[0]:.1f}x faster"
    print(row)
for name, args, stonne_s, stonne_cycles in cases:
    if stonne_s is None:
        continue
    for b, _ in binaries:
        got = cycles[(b, name)]
        if got != stonne_cycles:
            sys.exit(f"startup_bench.sh: {b} telar gave {got} cycles for {name}, STONNE {stonne_cycles}")
        med = stats(b, name)[0] / 1e3
        print(f"{name} ({b}): {got:,} cycles as STONNE; whole process {med * 1e3:.1f} ms, "
              f"{stonne_s / med:,.0f}x STONNE's {stonne_s} s")
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
