; LDS DMA variants for the emulator tests (issue 5). One wave; LDS is 1 KiB, prefilled
; with 0xA5A5A5A5 by ds_write before each DMA; the kernel copies LDS to %out afterwards.
;   dma_offset(in, out):       global_load_lds_dword with offset:64 -> LDS[64 + 4*lane]
;                              gets in[16 + lane] (the immediate applies to both sides).
;   dma_ubyte(in, out):        global_load_lds_ubyte of byte in+lane; the "sbyte" build
;                              patches the mnemonic to global_load_lds_sbyte.
;   dma_struct(in, out):       buffer_load_dword ... idxen offen lds (struct buffer:
;                              stride 16, num_records 40, vindex = lane, voffset = 4,
;                              soffset = 8) -> lanes >= 40 are out of range.
;   dma_out_of_lds(in, out):   dwordx4 DMA whose LDS destination runs past 1 KiB (error).
;   tr_misaligned(in, out):    ds_read_b64_tr_b8 at a 4-byte-aligned address (error).
;   dma_war(in, out):          two waves, no barrier: wave 0 reads LDS that wave 1 then
;                              overwrites by DMA (a write-after-read race).
target triple = "amdgcn-amd-amdhsa"

@lds_offset = internal addrspace(3) global [1024 x i8] poison, align 16
@lds_ubyte = internal addrspace(3) global [1024 x i8] poison, align 16
@lds_struct = internal addrspace(3) global [1024 x i8] poison, align 16
@lds_oob = internal addrspace(3) global [1024 x i8] poison, align 16
@lds_tr = internal addrspace(3) global [1024 x i8] poison, align 16
@lds_war = internal addrspace(3) global [1024 x i8] poison, align 16

declare i32 @llvm.amdgcn.workitem.id.x()
declare void @llvm.amdgcn.s.barrier()
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32, i32)
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))

; Prefills 16 bytes per lane with 0xA5 and synchronizes the wave's LDS writes.
define internal void @prefill(ptr addrspace(3) %lds, i32 %lane) alwaysinline {
  %ofs = shl i32 %lane, 4
  %p = getelementptr inbounds i8, ptr addrspace(3) %lds, i32 %ofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %p, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  ret void
}

; Copies 16 bytes per lane of LDS to out.
define internal void @copy_out(ptr addrspace(3) %lds, ptr addrspace(1) %out, i32 %lane) alwaysinline {
  %ofs = shl i32 %lane, 4
  %p = getelementptr inbounds i8, ptr addrspace(3) %lds, i32 %ofs
  %v = load <4 x i32>, ptr addrspace(3) %p, align 16
  %ofs64 = zext i32 %ofs to i64
  %q = getelementptr inbounds i8, ptr addrspace(1) %out, i64 %ofs64
  store <4 x i32> %v, ptr addrspace(1) %q, align 16
  ret void
}

define amdgpu_kernel void @dma_offset(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  call void @prefill(ptr addrspace(3) @lds_offset, i32 %lane)
  %i = zext i32 %lane to i64
  %src = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %src, ptr addrspace(3) @lds_offset, i32 4, i32 64, i32 0)
  call void @copy_out(ptr addrspace(3) @lds_offset, ptr addrspace(1) %out, i32 %lane)
  ret void
}

define amdgpu_kernel void @dma_ubyte(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  call void @prefill(ptr addrspace(3) @lds_ubyte, i32 %lane)
  %i = zext i32 %lane to i64
  %src = getelementptr inbounds i8, ptr addrspace(1) %in, i64 %i
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %src, ptr addrspace(3) @lds_ubyte, i32 1, i32 0, i32 0)
  call void @copy_out(ptr addrspace(3) @lds_ubyte, ptr addrspace(1) %out, i32 %lane)
  ret void
}

define amdgpu_kernel void @dma_struct(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  call void @prefill(ptr addrspace(3) @lds_struct, i32 %lane)
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 16, i64 40, i32 159744)
  call void @llvm.amdgcn.struct.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) @lds_struct, i32 4, i32 %lane, i32 4, i32 8, i32 0, i32 0)
  call void @copy_out(ptr addrspace(3) @lds_struct, ptr addrspace(1) %out, i32 %lane)
  ret void
}

define amdgpu_kernel void @dma_out_of_lds(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %lane to i64
  %src = getelementptr inbounds <4 x i32>, ptr addrspace(1) %in, i64 %i
  %dst = getelementptr inbounds i8, ptr addrspace(3) @lds_oob, i32 512
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %src, ptr addrspace(3) %dst, i32 16, i32 0, i32 0)
  call void @copy_out(ptr addrspace(3) @lds_oob, ptr addrspace(1) %out, i32 %lane)
  ret void
}

define amdgpu_kernel void @tr_misaligned(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ofs = shl i32 %lane, 2
  %p = getelementptr inbounds i8, ptr addrspace(3) @lds_tr, i32 %ofs
  %v = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  %i = zext i32 %lane to i64
  %q = getelementptr inbounds <2 x i32>, ptr addrspace(1) %out, i64 %i
  store <2 x i32> %v, ptr addrspace(1) %q, align 8
  ret void
}

define amdgpu_kernel void @dma_war(ptr addrspace(1) %in, ptr addrspace(1) %out) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %first = icmp eq i32 %wave, 0
  br i1 %first, label %reader, label %dma

reader:
  call void @copy_out(ptr addrspace(3) @lds_war, ptr addrspace(1) %out, i32 %lane)
  br label %done

dma:
  %i = zext i32 %lane to i64
  %src = getelementptr inbounds <4 x i32>, ptr addrspace(1) %in, i64 %i
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %src, ptr addrspace(3) @lds_war, i32 16, i32 0, i32 0)
  br label %done

done:
  ret void
}

attributes #1 = { "amdgpu-flat-work-group-size"="128,128" "target-cpu"="gfx950" }
attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "target-cpu"="gfx950" }
