#!/usr/bin/env bash
# Compares the IR two builds of mla-opt produce, pass by pass (docs/architecture.md,
# "Known issue"): each pass of the mla-to-rocdl pipeline is run by both binaries on the
# same input (the first binary's output of the pass before), and the number of differing
# lines is printed. A pass that builds IR with nested op-creating calls whose argument
# order C++ leaves unspecified differs between a GCC-built and a Clang-built mla-opt.
#
#   scripts/ir-determinism.sh MLA_OPT_A MLA_OPT_B EXAMPLE.mlir...
#
# e.g. the normal build's against the sanitizer stage's (built with clang-22):
#   scripts/ir-determinism.sh build/bin/mla-opt build-asan/bin/mla-opt examples/*.mlir
# Exit status 1 when any pass differs.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
a=$1
b=$2
shift 2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for example in "$@"; do
  name=$(basename "$example" .mlir)
  dump="$work/$name.ir"
  "$a" --mla-to-rocdl --mlir-print-ir-after-all --mlir-print-ir-module-scope \
    --mlir-disable-threading "$example" >/dev/null 2>"$dump"
  "$b" --mla-to-rocdl --mlir-print-ir-after-all --mlir-print-ir-module-scope \
    --mlir-disable-threading "$example" >/dev/null 2>"$work/$name.b.ir"
  # Split each dump into one file a pass: NN.PASS.mlir.
  for side in "$dump" "$work/$name.b.ir"; do
    awk -v prefix="$side." '
      /^\/\/ -----\/\/ IR Dump After / {
        n++; pass = $0; sub(/^[^(]*\(/, "", pass); sub(/\).*$/, "", pass)
        file = sprintf("%s%02d.%s.mlir", prefix, n, pass); next }
      file { print > file }' "$side"
  done
  previous=""
  for file in "$dump".*.mlir; do
    pass=${file#"$dump".}
    pass=${pass#*.}
    pass=${pass%.mlir}
    if [ -z "$previous" ]; then
      # The first pass (mla-outline-kernels) runs on the example itself.
      other="$work/$name.b.ir.${file#"$dump".}"
      lines=$(diff "$file" "$other" | grep -c '^[<>]' || true)
    else
      case $pass in
      mla-*) ;;
      *) break ;; # the upstream conversions after the MLA passes
      esac
      "$a" "$previous" --pass-pipeline="builtin.module(gpu.module($pass))" >"$work/a.out"
      "$b" "$previous" --pass-pipeline="builtin.module(gpu.module($pass))" >"$work/b.out"
      lines=$(diff "$work/a.out" "$work/b.out" | grep -c '^[<>]' || true)
    fi
    echo "$name $pass: $lines differing lines"
    [ "$lines" = 0 ] || status=1
    previous=$file
  done
done
exit $status
