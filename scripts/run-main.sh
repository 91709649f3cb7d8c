#!/usr/bin/env bash
# Sets everything up (packages, configure, build), then runs the main job: mla-demo
# compiles the Kimi-K3 TP8 decode kernels (qlen 1, 2, 4), runs a realistic decode batch
# on the default device (a gfx950 through HIP if present, else the emulator) and prints
# a table of configuration, kernel resources, instruction budget, errors and times.
# Extra arguments go to mla-demo (see `build/bin/mla-demo --help`).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh" >&2
exec "$build/bin/mla-demo" "$@"
