#!/bin/sh
# The runtime links no LLVM (docs/deployment.md). Usage:
#   check-no-llvm.sh HEADER_DIR... -- OBJECT...
# Fails when an installed runtime header other than the LLVM bridge includes an LLVM
# header, or when an object of the runtime's libraries refers to a symbol of namespace
# llvm (the emulator, which needs LLVM, is the plugin libmla_emu.so).
status=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  for h in "$1"/*.h; do
    case "$h" in */LLVMBridge.h) continue ;; esac
    if grep -n '#include [<"]llvm/' "$h"; then
      echo "$h includes an LLVM header"
      status=1
    fi
  done
  shift
done
[ "$1" = "--" ] && shift
for o in "$@"; do
  refs=$(nm -uC "$o" | grep 'llvm::')
  if [ -n "$refs" ]; then
    echo "$o refers to LLVM:"
    echo "$refs" | head -5
    status=1
  fi
done
[ $status -eq 0 ] && echo "no LLVM in the runtime's headers and objects ($# objects)"
exit $status
