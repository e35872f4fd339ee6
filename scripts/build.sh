#!/usr/bin/env bash
# Configures and builds one flavour of telar: scripts/build.sh [release|sanitize|fuzz]
# release  -> build/release  (optimised, with benchmarks)
# sanitize -> build/sanitize (AddressSanitizer + UndefinedBehaviorSanitizer, no benchmarks, no
#             tests labelled slow; -g1: line tables for the reports, cheaper to compile).
#             Without the CUDA backend (TELAR_CUDA=OFF): the sanitizers cannot see into device
#             code or the closed cuBLAS/cuDNN libraries, CI machines have no GPU to run it on,
#             and nvcc would add minutes to a CI run that must stay under 40; the release
#             build compiles the backend and runs its (skipping) tests.
# fuzz     -> build/fuzz     (clang: the parsers' libFuzzer harnesses of fuzz/ only, everything
#             under AddressSanitizer + UndefinedBehaviorSanitizer; run them with scripts/fuzz.sh)
# Compiler caching: with ccache installed (scripts/setup.sh), objects are cached in the user's
# cache folder (~/.cache/ccache) with paths taken relative to the repository, so a fresh clone
# in another folder reuses what any earlier build compiled; TELAR_CCACHE=0 turns it off.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${TELAR_JOBS:-$(nproc)}
launcher=()
if [ "${TELAR_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
case "$flavour" in
  release)  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null ;;
  sanitize) cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
                  -DTELAR_SANITIZE=ON -DTELAR_BUILD_BENCH=OFF -DTELAR_CUDA=OFF "${launcher[@]}" >/dev/null ;;
  fuzz)     cmake -S . -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
                  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DTELAR_FUZZ=ON -DTELAR_BUILD_TESTS=OFF \
                  -DTELAR_BUILD_BENCH=OFF -DTELAR_CUDA=OFF -DTELAR_MPI=OFF "${launcher[@]}" >/dev/null
            cmake --build build/fuzz -j"$jobs" --target fuzzers
            exit 0 ;;
  *) echo "usage: scripts/build.sh [release|sanitize|fuzz]" >&2; exit 2 ;;
esac
cmake --build "build/$flavour" -j"$jobs"
