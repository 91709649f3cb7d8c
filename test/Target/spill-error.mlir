// A kernel whose live values do not fit its VGPR budget (here capped at 8
// with "amdgpu-num-vgpr") spills; the spill is reported at the kernel with
// its count, next to the scratch the spill slots occupy.
//
// RUN: not mla-compile %s 2>&1 | FileCheck %s
// RUN: mla-compile %s -verify-diagnostics

// CHECK: spill-error.mlir:[[@LINE+9]]:5: error: kernel 'many_live' spills registers (vgpr_spill_count = {{[1-9][0-9]*}}, sgpr_spill_count = 0); mla kernels must fit in the register file
// CHECK: spill-error.mlir:[[@LINE+8]]:5: error: kernel 'many_live' uses scratch memory

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    // Four 16-byte values are live at once (16 VGPRs) and stored in reverse
    // order; volatile keeps the loads and stores as written.
    // expected-error @+2 {{kernel 'many_live' spills registers}}
    // expected-error @+1 {{kernel 'many_live' uses scratch memory}}
    llvm.func @many_live(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel, passthrough = [["amdgpu-num-vgpr", "8"]]} {
      %p0 = llvm.getelementptr %in[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %p1 = llvm.getelementptr %in[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %p2 = llvm.getelementptr %in[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %p3 = llvm.getelementptr %in[3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %v0 = llvm.load volatile %p0 : !llvm.ptr<1> -> vector<4xf32>
      %v1 = llvm.load volatile %p1 : !llvm.ptr<1> -> vector<4xf32>
      %v2 = llvm.load volatile %p2 : !llvm.ptr<1> -> vector<4xf32>
      %v3 = llvm.load volatile %p3 : !llvm.ptr<1> -> vector<4xf32>
      %q0 = llvm.getelementptr %out[0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %q1 = llvm.getelementptr %out[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %q2 = llvm.getelementptr %out[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      %q3 = llvm.getelementptr %out[3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, vector<4xf32>
      llvm.store volatile %v3, %q0 : vector<4xf32>, !llvm.ptr<1>
      llvm.store volatile %v2, %q1 : vector<4xf32>, !llvm.ptr<1>
      llvm.store volatile %v1, %q2 : vector<4xf32>, !llvm.ptr<1>
      llvm.store volatile %v0, %q3 : vector<4xf32>, !llvm.ptr<1>
      llvm.return
    }
  }
}
