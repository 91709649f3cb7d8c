// Every kernel argument gets a .type_name in the metadata (from the LLVM type), so
// the runtime and mla-run refuse a float for an int of the same size.
//
// RUN: mla-compile %s -o %t.hsaco \
// RUN:   && llvm-readelf --notes %t.hsaco | FileCheck %s
// RUN: not mla-run %t.hsaco --kernel k --grid 1 --block 64 --arg out:%t.out:4 --arg i32:2 --arg i32:3 --arg i64:4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RUN-F32
// RUN: not mla-run %t.hsaco --kernel k --grid 1 --block 64 --arg out:%t.out:4 --arg f32:2 --arg f32:1.5 --arg i64:4 2>&1 \
// RUN:   | FileCheck %s --check-prefix=RUN-I32
// RUN: mla-run %t.hsaco --kernel k --grid 1 --block 64 --arg out:%t.out:4 --arg f32:2 --arg u32:3 --arg i64:4 \
// RUN:   && od -An -tx4 %t.out | FileCheck %s --check-prefix=OUT

// CHECK: .args:
// CHECK: .type_name: 'void*'
// CHECK: .type_name: float
// CHECK: .type_name: int
// CHECK: .type_name: long
// RUN-F32: --arg 2 'i32:2' for argument '1' (by_value, 4 bytes): the argument is of type 'float'
// RUN-I32: --arg 3 'f32:1.5' for argument '2' (by_value, 4 bytes): the argument is of type 'int'
// With matching types the kernel stores x * n = 2 * 3 = 6.0f.
// OUT: 40c00000

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<O = 3, chip = "gfx950", abi = "500">] {
    llvm.func @k(%out: !llvm.ptr<1>, %x: f32, %n: i32, %m: i64) attributes {gpu.kernel, rocdl.kernel} {
      %c = llvm.sitofp %n : i32 to f32
      %s = llvm.fmul %x, %c : f32
      llvm.store %s, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
