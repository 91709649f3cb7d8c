#!/usr/bin/env bash
# Mutation check of the emulator's tests (docs/emulator-fidelity.md, "Mutation run").
# Applies each one-line mutation below on its own, rebuilds the emulator test binaries,
# runs them, records which tests failed, and restores the file. A mutation is "killed"
# when at least one test fails. Prints a markdown table.
#
#   scripts/emu-mutations.sh [build-dir]      (default: build; needs a configured build)
#
# The source files must be unmodified (the script restores them with git checkout).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TARGETS="MLARuntimeTests MLAEmuKernelTests MLAEmuIsaTests"
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD} CCACHE_DIR=${CCACHE_DIR:-$HOME/.ccache}

# name | file | sed expression (must change exactly one line)
MUTATIONS=(
  "MFMA full-EXEC check off|emulator/emu/MatrixOps.cpp|s/if (isa::choice::kMfmaRequiresFullExec \&\& w.exec()/if (false \&\& w.exec()/"
  "vmcnt bits [15:14] dropped|emulator/emu/Branch.cpp|s/unsigned vm = (imm \& 0xf) | ((imm >> 10) \& 0x30);/unsigned vm = (imm \& 0xf);/"
  "LDS DMA ignores EXEC|emulator/emu/LdsDmaOps.cpp|0,/const uint64_t exec = w.exec();/s//const uint64_t exec = ~uint64_t(0);/"
  "raw buffer offset + size <= num_records off by one at the edge|emulator/emu/BufferResource.h|s/return offset + bytes <= r.numRecords;/return offset + bytes < r.numRecords;/"
  "structured buffer index < num_records off by one|emulator/emu/BufferResource.h|s/return index < r.numRecords;/return index <= r.numRecords;/"
  "cross-wave 'DMA completed, no barrier' check off|emulator/emu/Hazards.cpp|s/const bool unsynchronized = otherWaveWrote(granule, wave, epoch);/const bool unsynchronized = otherWaveWrote(granule, wave, epoch) \&\& !granule.writeIsDma;/"
  "DMA-vs-DMA race check off|emulator/emu/Hazards.cpp|s/^        granule.writeWave >= 0 \&\& granule.writeWave != wave \&\&$/        granule.writeWave >= 0 \&\& granule.writeWave != wave \&\& !granule.writeIsDma \&\&/"
  "cross-wave write-after-read check off|emulator/emu/Hazards.cpp|s/const int r = otherWaveRead(granule, wave, epoch);/const int r = -1;/"
  "an lgkmcnt wait completes LDS DMA (the old model)|emulator/emu/Wave.cpp|s|    // a covering vmcnt wait does.|    w.retire(Counter::VM, 0);|"
  "LDS DMA takes no lgkmcnt slot|emulator/emu/LdsDmaOps.cpp|s/if (w.launch->ldsDmaCountsOnLgkmcnt) {/if (false) {/"
  "MFMA follows the flushing MODE|emulator/emu/MatrixOps.cpp|s/  HostDenormalsKept keepDenormals;/  \/\/ mutated/"
  "fp8 conversions follow the flushing MODE|emulator/emu/Fp8ConvertOps.cpp|s/  HostDenormalsKept keepDenormals;/  \/\/ mutated/"
  "scale byte select: op_sel and op_sel_hi swapped|emulator/emu/MatrixOps.cpp|s/return unsigned(((mods \& srcmod::OpSel0) ? 1 : 0) + ((mods \& srcmod::OpSel1) ? 2 : 0));/return unsigned(((mods \& srcmod::OpSel0) ? 2 : 0) + ((mods \& srcmod::OpSel1) ? 1 : 0));/"
  "cbsz taken from blgp|emulator/emu/MatrixOps.cpp|s/  in.aux\[0\] = cbsz;/  in.aux[0] = blgp;/"
  "v_cvt_sr byte select bits swapped|emulator/emu/Fp8ConvertOps.cpp|s/in.aux\[0\] = ((in.srcMods\[2\] \& srcmod::OpSel0) ? 1 : 0) |/in.aux[0] = ((in.srcMods[2] \& srcmod::OpSel0) ? 2 : 0) ^/"
  "MFMA result wait states one short (passes + 3)|emulator/emu/isa/WaitStates.h|s/return passes + 4; }/return passes + 3; }/"
  "M0 -> LDS DMA wait state not required|emulator/emu/isa/WaitStates.h|s/kSaluM0ToLdsDma = 1;/kSaluM0ToLdsDma = 0;/"
)

if ! git diff --quiet -- emulator/emu; then
  echo "emulator/emu has local changes; commit or stash them first" >&2
  exit 2
fi

echo "| mutation | file | result | failing tests |"
echo "|---|---|---|---|"
for m in "${MUTATIONS[@]}"; do
  IFS='|' read -r name file expr <<<"$m"
  sed -i "$expr" "$file"
  if git diff --quiet -- "$file"; then
    echo "| $name | \`$file\` | NOT APPLIED (pattern not found) | |"
    continue
  fi
  changed=$(git diff --numstat -- "$file" | awk '{print $1}')
  if ! nice ninja -C "$BUILD" $TARGETS >/tmp/emu-mutation-build.log 2>&1; then
    echo "| $name | \`$file\` | BUILD FAILED | |"
    git checkout -q -- "$file"
    continue
  fi
  failed=""
  for bin in MLARuntimeTests MLAEmuKernelTests MLAEmuIsaTests; do
    out=$("$BUILD/bin/$bin" 2>&1)
    failed+=$(grep -E '^\[  FAILED  \] [A-Za-z0-9_./]+ \(' <<<"$out" | sed -E 's/^\[  FAILED  \] ([^ ]+) .*/\1/' | tr '\n' ' ')
  done
  if [ -n "$failed" ]; then result=killed; else result=SURVIVED; fi
  echo "| $name | \`$file\` ($changed line) | $result | ${failed% } |"
  git checkout -q -- "$file"
done
nice ninja -C "$BUILD" $TARGETS >/dev/null 2>&1
