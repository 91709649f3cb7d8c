// A kernel that needs scratch memory (a private array indexed at run time,
// too large for registers) is rejected after code generation, with an error
// at the kernel that names it and gives the scratch size; no code object is
// written.
//
// RUN: rm -f %t.hsaco && not mla-compile %s -o %t.hsaco 2>&1 | FileCheck %s
// RUN: not test -e %t.hsaco
// RUN: mla-compile %s -verify-diagnostics
// --no-resource-check lets it through and shows the scratch use.
// RUN: mla-compile %s --no-resource-check --print-kernel-resources | FileCheck %s --check-prefix=RES

// CHECK: scratch-error.mlir:[[@LINE+9]]:5: error: kernel 'private_table' uses scratch memory (private_segment_fixed_size = {{[1-9][0-9]*}} bytes per work-item); mla kernels must keep their data in registers and LDS
// CHECK-NOT: error
// CHECK-NOT: note: see current operation

// RES: kernel @private_table: {{.*}} private_segment_fixed_size={{[1-9][0-9]*}}

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    // expected-error @+1 {{kernel 'private_table' uses scratch memory}}
    llvm.func @private_table(%out: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
      %c1 = llvm.mlir.constant(1 : i32) : i32
      %c1023 = llvm.mlir.constant(1023 : i32) : i32
      // 4 KiB per work-item, written and read at run-time indices.
      %arr = llvm.alloca %c1 x !llvm.array<1024 x i32> : (i32) -> !llvm.ptr<5>
      %tid = rocdl.workitem.id.x : i32
      %i = llvm.and %tid, %c1023 : i32
      %p = llvm.getelementptr %arr[0, %i] : (!llvm.ptr<5>, i32) -> !llvm.ptr<5>, !llvm.array<1024 x i32>
      llvm.store %tid, %p : i32, !llvm.ptr<5>
      %j = llvm.xor %i, %n : i32
      %j2 = llvm.and %j, %c1023 : i32
      %q = llvm.getelementptr %arr[0, %j2] : (!llvm.ptr<5>, i32) -> !llvm.ptr<5>, !llvm.array<1024 x i32>
      %v = llvm.load %q : !llvm.ptr<5> -> i32
      %o = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %v, %o : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}
