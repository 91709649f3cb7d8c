// The pass form of the emitter, mla-emit-hsaco (run here through
// mla-compile's --pass-pipeline): it writes the same code object as the
// driver, leaves the IR alone, and fails with the same diagnostics.
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.driver.hsaco \
// RUN:   --pass-pipeline='builtin.module(mla-emit-hsaco{output=%t.pass.hsaco})' \
// RUN:   | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: cmp %t.pass.hsaco %t.driver.hsaco | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: llvm-readelf -h %t.pass.hsaco | FileCheck %s
// code-object-version=600 reaches the file.
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir \
// RUN:   --pass-pipeline='builtin.module(mla-emit-hsaco{output=%t.v6.hsaco code-object-version=600})' \
// RUN:   && llvm-readelf -h %t.v6.hsaco | FileCheck %s --check-prefix=V6
// A kernel that uses scratch makes the pass fail at the kernel.
// RUN: not mla-compile %S/scratch-error.mlir \
// RUN:   --pass-pipeline='builtin.module(mla-emit-hsaco{output=%t.bad.hsaco})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SCRATCH
// RUN: not test -e %t.bad.hsaco

// QUIET-NOT: {{.}}
// CHECK: ABI Version: 3
// CHECK: Machine: EM_AMDGPU
// V6: ABI Version: 4
// SCRATCH: scratch-error.mlir:{{[0-9]+}}:5: error: kernel 'private_table' uses scratch memory
