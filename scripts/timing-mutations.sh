#!/usr/bin/env bash
# Mutation check of the timing model's tests (docs/timing-model.md, "Mutation run"):
# scripts/emu-mutations.sh for the timing mode. Applies each one-line mutation below on
# its own (a parameter or rule of the model disconnected), rebuilds the test binaries,
# runs the timing tests and mla-perf's table test, records which failed, and restores
# the file. A mutation is "killed" when at least one test fails. Prints a markdown table.
#
#   scripts/timing-mutations.sh [build-dir]   (default: build; needs a configured build)
#   MUTATION_FILTER=setprio scripts/timing-mutations.sh   (only the mutations so named)
#
# The source files must be unmodified (the script restores them with git checkout).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TARGETS="MLARuntimeTests PerfCaseTest"
FILTER='Timing*:PerfModelTest.TableGoldenRatios'
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}
EMU=emulator/emu
CU=$EMU/timing/CuModel.cpp
PARAMS=$EMU/timing/Params.cpp
DEVICE=runtime/lib/EmuDevice.cpp

# name | file | sed expression (must change exactly one line)
MUTATIONS=(
  "ldsDmaCountsOnLgkmcnt ignored (always 1)|$DEVICE|s/L.ldsDmaCountsOnLgkmcnt = options_.params.ldsDmaCountsOnLgkmcnt != 0;/L.ldsDmaCountsOnLgkmcnt = true;/"
  "hbmEfficiency ignored|$PARAMS|s/return hbmTBps \* 1e12 \* hbmEfficiency \/ (cus \* clockGHz \* 1e9);/return hbmTBps * 1e12 \/ (cus * clockGHz * 1e9);/"
  "HBM share divided over all CUs, not the active ones|$PARAMS|s/double cus = activeCUs > 0 ? activeCUs : numCUs;/double cus = numCUs;/"
  "HBM channel never queues|$CU|s/hbmFree_ = std::max(hbmFree_, double(start)) + charged \/ ctx_.bytesPerCycle;/hbmFree_ = double(start) + charged \/ ctx_.bytesPerCycle;/"
  "MFMA pipe never busy|$CU|s/if (mfmaFree_\[s.simd\] > now_)/if (false)/"
  "fp8 x fp4 MFMA costed as fp4 x fp4|$CU|s/const bool anyFp8 = in.aux\[0\] <= 1 || in.aux\[1\] <= 1;/const bool anyFp8 = in.aux[0] <= 1 \&\& in.aux[1] <= 1;/"
  "timing s_waitcnt decode reads vmcnt bits [3:0] only|$CU|s/unsigned vm = (imm \& 0xf) | ((imm >> 10) \& 0x30);/unsigned vm = (imm \& 0xf);/"
  "loads land 4 cycles early|$CU|s/ready = std::max<uint64_t>(start + ta + uint64_t(p_.hbmLatency),/ready = std::max<uint64_t>(start + ta + uint64_t(p_.hbmLatency) - 4,/"
  "barrier release free|$CU|s/s.readyAt = now_ + uint64_t(p_.barrierReleaseCycles);/s.readyAt = now_;/"
  "LDS DMA writes free on the LDS pipe|$CU|s/      ldsFree_ = std::max(ldsFree_, now_) + cost.cycles;/      (void)0;/"
  "L2 hits charged to HBM|$CU|s/if (!seenLines_.insert(line).second) {/if (false \&\& !seenLines_.insert(line).second) {/"
  "vector memory path without occupancy|$CU|s/  vmemFree_ = start + ta;/  vmemFree_ = start;/"
  "lgkmcnt slot of an LDS DMA not waited for|$CU|s/uint64_t lready = std::max(ready, s.lastLgkmReady);/uint64_t lready = std::max(now_, s.lastLgkmReady);/"
  "hbmQueue=serial ignored|$CU|s/if (charged > 0 \&\& p_.hbmQueueSerial()) {/if (false) {/"
  "s_setprio ignored (oldest first always)|$CU|s/      if (topPriority_ > 0)$/      if (false)/"
)

if ! git diff --quiet -- "$EMU" "$DEVICE"; then
  echo "$EMU or $DEVICE has local changes; commit or stash them first" >&2
  exit 2
fi

run_tests() {
  local failed=""
  for bin in MLARuntimeTests PerfCaseTest; do
    out=$("$BUILD/bin/$bin" --gtest_filter="$FILTER" 2>&1)
    failed+=$(grep -E '^\[  FAILED  \] [A-Za-z0-9_./]+ \(' <<<"$out" | sed -E 's/^\[  FAILED  \] ([^ ]+) .*/\1/' | tr '\n' ' ')
  done
  echo "$failed"
}

if ! nice ninja -C "$BUILD" $TARGETS >/tmp/timing-mutation-build.log 2>&1; then
  echo "the unmutated tree does not build (/tmp/timing-mutation-build.log)" >&2
  exit 2
fi
baseline=$(run_tests)
if [ -n "$baseline" ]; then
  echo "tests fail without a mutation: $baseline" >&2
  exit 2
fi

echo "| mutation | file | result | failing tests |"
echo "|---|---|---|---|"
for m in "${MUTATIONS[@]}"; do
  IFS='|' read -r name file expr <<<"$m"
  [[ -z "${MUTATION_FILTER:-}" || "$name" == *"$MUTATION_FILTER"* ]] || continue
  sed -i "$expr" "$file"
  if git diff --quiet -- "$file"; then
    echo "| $name | \`$file\` | NOT APPLIED (pattern not found) | |"
    continue
  fi
  changed=$(git diff --numstat -- "$file" | awk '{print $1}')
  if ! nice ninja -C "$BUILD" $TARGETS >/tmp/timing-mutation-build.log 2>&1; then
    echo "| $name | \`$file\` | BUILD FAILED | |"
    git checkout -q -- "$file"
    continue
  fi
  failed=$(run_tests)
  if [ -n "$failed" ]; then result=killed; else result=SURVIVED; fi
  echo "| $name | \`$file\` ($changed line) | $result | ${failed% } |"
  git checkout -q -- "$file"
done
nice ninja -C "$BUILD" $TARGETS >/dev/null 2>&1
