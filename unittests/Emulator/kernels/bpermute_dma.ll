; An LDS DMA issued while a ds_bpermute is in flight: LLVM 22 counts the DMA on
; lgkmcnt too and waits lgkmcnt(1) before using the bpermute's result (the emulator's
; kLdsDmaCountsOnLgkmcnt choice). out[t] = src[63 - t]; the DMA fills the LDS.
@lds = internal addrspace(3) global [1024 x i8] undef, align 16

define amdgpu_kernel void @bpermute_dma(ptr addrspace(1) %src, ptr addrspace(1) %out) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %sp = getelementptr i32, ptr addrspace(1) %src, i32 %t
  %v = load i32, ptr addrspace(1) %sp
  %rev = sub i32 63, %t
  %idx = shl i32 %rev, 2
  %r = call i32 @llvm.amdgcn.ds.bpermute(i32 %idx, i32 %v)
  %dp = getelementptr i8, ptr addrspace(1) %src, i32 %idx
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %dp, ptr addrspace(3) @lds, i32 16, i32 0, i32 0)
  call void asm sideeffect "; keep the DMA between the bpermute and its use", ""()
  %op = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %op
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
