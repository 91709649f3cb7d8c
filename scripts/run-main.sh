#!/usr/bin/env bash
# Sets everything up (packages, configure, build), then runs the main job: compiles the
# sample Kimi-K3 TP8 module with mla-opt and prints it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" >&2
exec "$build/bin/mla-opt" "$root/examples/kimi_k3_tp8_q1.mlir" "$@"
