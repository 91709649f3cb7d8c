; VALU-heavy: each work-item runs `iters` iterations of 8 independent f32 FMA
; chains and a few integer ops, then stores one value.
define amdgpu_kernel void @valu_heavy(ptr addrspace(1) %out, i32 %iters) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %bid, 256
  %i = add i32 %b, %tid
  %f = uitofp i32 %i to float
  br label %loop
loop:
  %n = phi i32 [ 0, %entry ], [ %nn, %loop ]
  %a0 = phi float [ %f, %entry ], [ %x0, %loop ]
  %a1 = phi float [ 1.0, %entry ], [ %x1, %loop ]
  %a2 = phi float [ 2.0, %entry ], [ %x2, %loop ]
  %a3 = phi float [ 3.0, %entry ], [ %x3, %loop ]
  %a4 = phi float [ 4.0, %entry ], [ %x4, %loop ]
  %a5 = phi float [ 5.0, %entry ], [ %x5, %loop ]
  %a6 = phi float [ 6.0, %entry ], [ %x6, %loop ]
  %a7 = phi float [ 7.0, %entry ], [ %x7, %loop ]
  %x0 = call float @llvm.fma.f32(float %a0, float 0.99609375, float 0.5)
  %x1 = call float @llvm.fma.f32(float %a1, float 0.9921875, float %a0)
  %x2 = call float @llvm.fma.f32(float %a2, float 0.984375, float 0.25)
  %x3 = call float @llvm.fma.f32(float %a3, float 0.96875, float %a2)
  %x4 = call float @llvm.fma.f32(float %a4, float 0.9375, float 0.125)
  %x5 = call float @llvm.fma.f32(float %a5, float 0.875, float %a4)
  %x6 = call float @llvm.fma.f32(float %a6, float 0.75, float 0.0625)
  %x7 = call float @llvm.fma.f32(float %a7, float 0.5, float %a6)
  %nn = add i32 %n, 1
  %c = icmp slt i32 %nn, %iters
  br i1 %c, label %loop, label %done
done:
  %s0 = fadd float %x0, %x1
  %s1 = fadd float %x2, %x3
  %s2 = fadd float %x4, %x5
  %s3 = fadd float %x6, %x7
  %t0 = fadd float %s0, %s1
  %t1 = fadd float %s2, %s3
  %t = fadd float %t0, %t1
  %p = getelementptr float, ptr addrspace(1) %out, i32 %i
  store float %t, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare float @llvm.fma.f32(float, float, float)
