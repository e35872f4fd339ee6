#!/usr/bin/env bash
# Installs every Debian package telar's build, tests, benchmarks and demo need.
# Idempotent: quiet and quick when everything is already installed. Run as root (or with sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  ccache                 # compiler cache (scripts/build.sh): rebuilds and fresh clones reuse objects
  libdnnl-dev            # oneDNN 2.6, CPU kernels (OpenMP runtime)
  ocl-icd-opencl-dev     # dnnl-config.cmake requires OpenCL (its GPU runtime); a Recommends, so named
  libfmt-dev nlohmann-json3-dev libcli11-dev libtomlplusplus-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin   # optional multi-process backend
  libpapi-dev libpfm4-dev      # optional counter back-ends
  libopenblas-dev              # BLAS dgemm for the profiler's validation benchmark
  dataset-fashion-mnist        # real data: /usr/share/datasets/fashion-mnist
  python3-torch python3-numpy  # the peer for side-by-side benchmarks
  libonnx-dev libprotobuf-dev  # ONNX import (src/onnx): Debian's ONNX protobuf classes
  python3-torchvision python3-onnx  # ONNX test fixtures exported at test time, and the checker
  clang libclang-rt-14-dev     # the parsers' libFuzzer harnesses (fuzz/, scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup.sh: missing packages (${missing[*]}); run this script as root" >&2
    exit 2
  fi
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
