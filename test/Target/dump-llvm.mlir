// --dump-llvm prints the optimised LLVM IR handed to the AMDGPU backend: the
// triple and data layout come from the gfx950 TargetMachine, the code object
// version is set explicitly as a module flag, and the ROCDL ops are the
// AMDGPU intrinsics. Without a FILE it goes to stdout.
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir --dump-llvm | FileCheck %s
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir --dump-llvm --code-object-version=600 \
// RUN:   | FileCheck %s --check-prefix=V6

// CHECK: ; gpu.module @kernels
// The TargetMachine's layout (with the ELF mangling component m:e).
// CHECK: target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32
// CHECK: target triple = "amdgcn-amd-amdhsa"
// CHECK: @__wg_tile_mfma_0 = internal {{.*}}addrspace(3) global [4096 x i8]
// CHECK: define amdgpu_kernel void @tile_mfma(ptr addrspace(1)
// CHECK-COUNT-4: call void @llvm.amdgcn.global.load.lds(
// CHECK-COUNT-8: call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64
// CHECK-COUNT-2: call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4
// CHECK: !{i32 1, !"amdhsa_code_object_version", i32 500}

// V6: !{i32 1, !"amdhsa_code_object_version", i32 600}
