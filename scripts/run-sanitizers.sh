#!/usr/bin/env bash
# The sanitizer and fuzzing stage of the test run (called by scripts/run-tests.sh after
# the normal build's tests; docs/robustness.md):
#
#   1. build-asan: compiler, runtime, emulator and tests built with clang-22 under
#      AddressSanitizer + UndefinedBehaviorSanitizer, plus the libFuzzer targets
#      (MLA_ENABLE_FUZZERS); its whole CTest suite runs (lit, GoogleTest, each
#      fuzzer's regression inputs once and MLA_FUZZ_SECONDS of fuzzing from the seeds);
#      then scripts/ir-determinism.sh compares its mla-opt with the normal build's (GCC).
#      The Python package is not built there (it would need the ASan runtime preloaded
#      into python3); the normal build's CTest run covers it.
#   2. build-tsan: the runtime, emulator and Decoder tests under ThreadSanitizer, with
#      MLA_EMU_THREADS=4 (the emulator runs workgroups on several host threads; the
#      Decoder's tests share one Decoder and one device between threads and compile
#      their kernels into a fresh cache directory).
#
#   MLA_SANITIZER_STAGES="asan tsan" (default) selects the stages; each stage prints
#   its build and test times.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
stages=${MLA_SANITIZER_STAGES:-asan tsan}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# allow_user_poisoning=0: LLVM's allocator headers poison and unpoison their slabs only
# in ASan-instrumented code. Our instrumented code and Debian's uninstrumented
# libMLIR.so allocate from the same BumpPtrAllocator slabs (the context's storage
# uniquer), so a slab poisoned by our inline code and then used by libMLIR's reads as
# use-after-poison although nothing is wrong (docs/robustness.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

configure() { # dir, extra cmake arguments...
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DPython3_EXECUTABLE=/usr/bin/python3 -DMLA_ENABLE_PYTHON=OFF "$@"
  fi
}

stage_time() { # name, start seconds
  echo "run-sanitizers: $1 took $(($(date +%s) - $2)) s"
}

for stage in $stages; do
  case $stage in
  asan)
    dir=${MLA_ASAN_BUILD_DIR:-$root/build-asan}
    start=$(date +%s)
    configure "$dir" -DMLA_SANITIZERS=address,undefined -DMLA_ENABLE_FUZZERS=ON
    cmake --build "$dir" -j2
    stage_time "ASan+UBSan+fuzzer build" "$start"
    start=$(date +%s)
    ctest --test-dir "$dir" --output-on-failure -j2 --no-tests=error
    stage_time "ASan+UBSan tests and fuzzing" "$start"
    # The generated code must not depend on the host compiler: this build's mla-opt
    # (clang-22) and the normal build's (GCC) give the same IR after every MLA pass.
    start=$(date +%s)
    bash "$root/scripts/ir-determinism.sh" --configs "${MLA_BUILD_DIR:-$root/build}/bin/mla-opt" \
      "$dir/bin/mla-opt" "$root"/examples/*.mlir "$root/test/Target/dcp-merge-isa-gfx950.mlir"
    stage_time "IR determinism (GCC and clang-22 builds)" "$start"
    ;;
  tsan)
    dir=${MLA_TSAN_BUILD_DIR:-$root/build-tsan}
    start=$(date +%s)
    configure "$dir" -DMLA_SANITIZERS=thread
    tsan_tests="MLARuntimeTests MLAEmuKernelTests MLADecoderTests"
    cmake --build "$dir" -j2 --target $tsan_tests
    stage_time "TSan build" "$start"
    start=$(date +%s)
    cache=$(mktemp -d)
    for t in $tsan_tests; do
      MLA_CACHE_DIR=$cache MLA_EMU_THREADS=4 "$dir/bin/$t" --gtest_brief=1
    done
    rm -rf "$cache"
    stage_time "TSan tests" "$start"
    ;;
  *)
    echo "run-sanitizers: unknown stage '$stage' (expected asan, tsan)" >&2
    exit 2
    ;;
  esac
done
