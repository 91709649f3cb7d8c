#!/usr/bin/env bash
# Sets everything up (packages, configure, build) and runs every test through one CTest run:
# lit/FileCheck IR and code-object tests, GoogleTest unit tests, emulator end-to-end tests
# and the Python package's pytest suite; then the sanitizer stage (scripts/run-sanitizers.sh:
# the same suite under ASan + UBSan with the fuzzers, and the threaded runtime and emulator
# tests under TSan; MLA_SANITIZER_STAGES="" skips it). Exits non-zero if any test fails or
# none ran.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLA_BUILD_DIR:-$root/build}
"$root/scripts/setup.sh"
ctest --test-dir "$build" --output-on-failure -j2 --no-tests=error
if [ -n "${MLA_SANITIZER_STAGES-asan tsan}" ]; then
  bash "$root/scripts/run-sanitizers.sh"
fi
