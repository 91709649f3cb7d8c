; An f8f6f4 MFMA with fp6 (E2M3) operands, whose register packing the reference does not
; know: the emulator must refuse it when decoding, naming the format.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v6i32(<6 x i32>, <6 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)

define amdgpu_kernel void @mfma_fp6(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %lane to i64
  %p = getelementptr inbounds <6 x i32>, ptr addrspace(1) %in, i64 %i
  %a = load <6 x i32>, ptr addrspace(1) %p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v6i32.v6i32(<6 x i32> %a, <6 x i32> %a, <4 x float> zeroinitializer, i32 2, i32 2, i32 0, i32 0, i32 0, i32 0)
  %q = getelementptr inbounds <4 x float>, ptr addrspace(1) %out, i64 %i
  store <4 x float> %d, ptr addrspace(1) %q, align 16
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "target-cpu"="gfx950" }
