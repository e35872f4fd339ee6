#!/usr/bin/env bash
# Installs ONNX Runtime for Node.js (npm's onnxruntime-node, CPU build) into a cache folder, the
# peer that telar's ONNX files are checked and timed against. Prints the folder.
#   bench/peer/install_ort.sh            # ${TELAR_ORT_DIR:-~/.cache/telar/ort}
set -euo pipefail
dir="${TELAR_ORT_DIR:-${HOME}/.cache/telar/ort}"
version="1.20.1"
if [ ! -f "${dir}/node_modules/onnxruntime-node/package.json" ]; then
  command -v npm >/dev/null || { echo "install_ort.sh: npm is not installed (apt-get install npm)" >&2; exit 2; }
  mkdir -p "${dir}"
  # The CPU binaries ship in the package; its install script would fetch CUDA ones from GitHub.
  (cd "${dir}" && ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --no-audit --no-fund --silent \
      "onnxruntime-node@${version}" >&2)
fi
echo "${dir}"
