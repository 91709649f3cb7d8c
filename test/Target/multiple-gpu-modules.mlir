// With several gpu.modules, -o OUT.hsaco names a pattern: gpu.module @name is
// written to OUT.name.hsaco, each a code object holding only its kernels.
//
// RUN: rm -f %t.hsaco %t.first.hsaco %t.second.hsaco && mla-compile %s -o %t.hsaco --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: llvm-readelf --notes %t.first.hsaco | FileCheck %s --check-prefix=FIRST
// RUN: llvm-readelf --notes %t.second.hsaco | FileCheck %s --check-prefix=SECOND
// RUN: not test -e %t.hsaco

// RES: kernel @copy_first:
// RES: kernel @copy_second:

// FIRST: .name: copy_first
// FIRST-NOT: copy_second
// SECOND: .name: copy_second
// SECOND-NOT: copy_first

module attributes {gpu.container_module} {
  gpu.module @first [#rocdl.target<chip = "gfx950">] {
    llvm.func @copy_first(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %v = llvm.load %in : !llvm.ptr<1> -> f32
      llvm.store %v, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
  gpu.module @second [#rocdl.target<chip = "gfx950">] {
    llvm.func @copy_second(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %v = llvm.load %in : !llvm.ptr<1> -> i32
      llvm.store %v, %out : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}
