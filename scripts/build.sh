#!/usr/bin/env bash
# Configures and builds one flavour of telar: scripts/build.sh [release|sanitize]
# release  -> build/release  (optimised, with benchmarks)
# sanitize -> build/sanitize (AddressSanitizer + UndefinedBehaviorSanitizer, no benchmarks, no
#             tests labelled slow; -g1: line tables for the reports, cheaper to compile).
#             Without the CUDA backend (TELAR_CUDA=OFF): the sanitizers cannot see into device
#             code or the closed cuBLAS/cuDNN libraries, CI machines have no GPU to run it on,
#             and nvcc would add minutes to a CI run that must stay under 40; the release
#             build compiles the backend and runs its (skipping) tests.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:-release}
jobs=${TELAR_JOBS:-$(nproc)}
case "$flavour" in
  release)  cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null ;;
  sanitize) cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
                  -DTELAR_SANITIZE=ON -DTELAR_BUILD_BENCH=OFF -DTELAR_CUDA=OFF >/dev/null ;;
  *) echo "usage: scripts/build.sh [release|sanitize]" >&2; exit 2 ;;
esac
cmake --build "build/$flavour" -j"$jobs"
