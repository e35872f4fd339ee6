#!/usr/bin/env bash
# telar's front door, on a fresh machine: installs dependencies, builds, runs `telar demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh release
exec build/release/telar demo "$@"
