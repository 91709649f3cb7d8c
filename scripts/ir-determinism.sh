#!/usr/bin/env bash
# Compares the IR two builds of mla-opt produce, pass by pass (docs/architecture.md,
# "Generated code and the host compiler"): each MLA pass of the mla-to-rocdl pipeline is
# run by both binaries on the same input (the first binary's output of the pass before),
# and every pass whose outputs differ is printed with its number of differing lines. A
# pass that builds IR with nested op-creating calls, whose argument order C++ leaves
# unspecified, differs between a GCC-built and a Clang-built mla-opt.
#
#   scripts/ir-determinism.sh [--configs] MLA_OPT_A MLA_OPT_B [INPUT.mlir...]
#
# --configs adds kernel configurations derived from examples/kimi_k3_tp8_q1_wspec.mlir
# (wspec at qlen 2 and 4, the wide-KV build with and without wspec, 128 heads, qlen 16).
# The sanitizer stage runs it on the normal build's mla-opt (GCC) and its own (clang-22).
# Exit status 1 when any pass differs.
set -euo pipefail
configs=0
if [ "${1-}" = --configs ]; then
  configs=1
  shift
fi
if [ $# -lt 2 ]; then
  sed -n '2,15p' "$0" >&2
  exit 2
fi
a=$1
b=$2
shift 2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inputs=("$@")
if [ $configs = 1 ]; then
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  base="$root/examples/kimi_k3_tp8_q1_wspec.mlir"
  mkdir -p "$work/configs"
  while read -r name heads config; do
    sed -e "s/heads = 12, qlen = 1, wspec = true/$config/" -e "s/x12x/x${heads}x/g" \
      "$base" >"$work/configs/$name.mlir"
    inputs+=("$work/configs/$name.mlir")
  done <<'CONFIGS'
wspec_qlen2 12 heads = 12, qlen = 2, wspec = true
wspec_qlen4 12 heads = 12, qlen = 4, wspec = true
wide_kv 12 heads = 12, qlen = 1, wide_kv = true
wspec_wide_kv 12 heads = 12, qlen = 4, wspec = true, wide_kv = true
heads128 128 heads = 128, qlen = 1
qlen16 16 heads = 16, qlen = 16
CONFIGS
fi
checked=0
status=0
for example in "${inputs[@]}"; do
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
    checked=$((checked + 1))
    if [ "$lines" != 0 ]; then
      echo "$name $pass: $lines differing lines"
      status=1
    fi
    previous=$file
  done
done
if [ $checked = 0 ]; then
  echo "ir-determinism: no pass checked" >&2
  exit 2
fi
echo "ir-determinism: ${#inputs[@]} inputs, $checked passes run by both, $([ $status = 0 ] && echo 'the same IR' || echo 'differences above')"
exit $status
