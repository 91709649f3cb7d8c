; Hardware self-test kernels of the gfx950 emulator's "part 2" instructions (issue 5).
;
; One tiny single-wave kernel per instruction family. Every kernel has the signature
;   kernel(ptr addrspace(1) %in, ptr addrspace(1) %out)
; and runs with one workgroup of 64 work-items: lane l reads its IN dwords at
; in[l*IN ...] and writes its OUT dwords at out[l*OUT ...] (IN/OUT per kernel below,
; mirrored by emulator/selftest/SelfTest.cpp). The host compares the raw output
; bytes with the emulator's model (emu/isa) and, on a gfx950, with the hardware.
; Built at build time with llc + ld.lld; never committed as a binary.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v4i32(<8 x i32>, <4 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32>, <4 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <16 x float>, i32, i32, i32, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8(i64, i64, <4 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat>, <8 x bfloat>, <4 x float>, i32, i32, i32)
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
declare <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3))
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8), ptr addrspace(3), i32, i32, i32, i32, i32)
declare i32 @llvm.amdgcn.cvt.pk.fp8.f32(float, float, i32, i1)
declare i32 @llvm.amdgcn.cvt.pk.bf8.f32(float, float, i32, i1)
declare i32 @llvm.amdgcn.cvt.sr.fp8.f32(float, i32, i32, i32)
declare i32 @llvm.amdgcn.cvt.sr.bf8.f32(float, i32, i32, i32)
declare float @llvm.amdgcn.cvt.f32.fp8(i32, i32)
declare float @llvm.amdgcn.cvt.f32.bf8(i32, i32)
declare <2 x float> @llvm.amdgcn.cvt.pk.f32.fp8(i32, i1)
declare <2 x float> @llvm.amdgcn.cvt.pk.f32.bf8(i32, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16>, float, float, float, i1)
declare <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16>, float, float, float, i1)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32, float, i1)
declare <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32, float, i1)
declare float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32, float, i32)
declare float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32, float, i32, float, i32)
declare i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32, float, i32, float, i32)
declare {i32, i32} @llvm.amdgcn.permlane16.swap(i32, i32, i1, i1)
declare {i32, i32} @llvm.amdgcn.permlane32.swap(i32, i32, i1, i1)
declare float @llvm.amdgcn.exp2.f32(float)

; st_mfma_scale_f8_f8_16x16x128: IN = 22, OUT = 4. A fp8 (8 dwords), B fp8 (8), C (4), scale A (byte 2), scale B (byte 1).
define amdgpu_kernel void @st_mfma_scale_f8_f8_16x16x128(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 22
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load <8 x i32>, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %b = load <8 x i32>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 16
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %sa.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 20
  %sa = load i32, ptr addrspace(1) %sa.p, align 4
  %sb.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 21
  %sb = load i32, ptr addrspace(1) %sb.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 0, i32 0, i32 2, i32 %sa, i32 1, i32 %sb)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_mfma_scale_f8_f4_16x16x128: IN = 18, OUT = 4. A fp8 (8), B fp4 (4), C (4), scale A (byte 0), scale B (byte 3).
define amdgpu_kernel void @st_mfma_scale_f8_f4_16x16x128(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 18
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load <8 x i32>, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %b = load <4 x i32>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 12
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %sa.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 16
  %sa = load i32, ptr addrspace(1) %sa.p, align 4
  %sb.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 17
  %sb = load i32, ptr addrspace(1) %sb.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v4i32(<8 x i32> %a, <4 x i32> %b, <4 x float> %c, i32 0, i32 4, i32 0, i32 %sa, i32 3, i32 %sb)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_mfma_f4_f4_16x16x128: IN = 12, OUT = 4. Unscaled (constant-0 scales select the plain opcode): A fp4, B fp4, C.
define amdgpu_kernel void @st_mfma_f4_f4_16x16x128(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 12
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load <4 x i32>, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %b = load <4 x i32>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v4i32.v4i32(<4 x i32> %a, <4 x i32> %b, <4 x float> %c, i32 4, i32 4, i32 0, i32 0, i32 0, i32 0)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_mfma_scale_bf8_f8_32x32x64: IN = 34, OUT = 16. A bf8 (8), B fp8 (8), C (16), scales byte 0.
define amdgpu_kernel void @st_mfma_scale_bf8_f8_32x32x64(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 34
  %obase = mul i32 %lane, 16
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load <8 x i32>, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %b = load <8 x i32>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 16
  %c = load <16 x float>, ptr addrspace(1) %c.p, align 4
  %sa.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 32
  %sa = load i32, ptr addrspace(1) %sa.p, align 4
  %sb.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 33
  %sb = load i32, ptr addrspace(1) %sb.p, align 4
  %d = call <16 x float> @llvm.amdgcn.mfma.scale.f32.32x32x64.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <16 x float> %c, i32 1, i32 0, i32 0, i32 %sa, i32 0, i32 %sb)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <16 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_mfma_16x16x32_fp8_bf8: IN = 8, OUT = 4. A fp8 (2), B bf8 (2), C (4).
define amdgpu_kernel void @st_mfma_16x16x32_fp8_bf8(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 8
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load i64, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %b = load i64, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.fp8.bf8(i64 %a, i64 %b, <4 x float> %c, i32 0, i32 0, i32 0)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_mfma_16x16x32_bf16: IN = 12, OUT = 4. A bf16 (4), B bf16 (4), C (4).
define amdgpu_kernel void @st_mfma_16x16x32_bf16(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 12
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load <8 x bfloat>, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %b = load <8 x bfloat>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.bf16(<8 x bfloat> %a, <8 x bfloat> %b, <4 x float> %c, i32 0, i32 0, i32 0)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x float> %d, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_ds_read_tr8: IN = 5, OUT = 2. Lane l writes its 16 data bytes to LDS[16l], then reads 8 bytes at its address (8-aligned, < 1024) with the transposing read.
@st_ds_read_tr8.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_ds_read_tr8(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 5
  %obase = mul i32 %lane, 2
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %data.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %data = load <4 x i32>, ptr addrspace(1) %data.p, align 4
  %addr.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %addr = load i32, ptr addrspace(1) %addr.p, align 4
  %wofs = shl i32 %lane, 4
  %wp = getelementptr inbounds i8, ptr addrspace(3) @st_ds_read_tr8.lds, i32 %wofs
  store <4 x i32> %data, ptr addrspace(3) %wp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_ds_read_tr8.lds, i32 %addr
  %r = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %rp)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <2 x i32> %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_ds_read_tr16: IN = 5, OUT = 2. Lane l writes its 16 data bytes to LDS[16l], then reads 8 bytes at its address (8-aligned, < 1024) with the transposing read.
@st_ds_read_tr16.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_ds_read_tr16(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 5
  %obase = mul i32 %lane, 2
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %data.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %data = load <4 x i32>, ptr addrspace(1) %data.p, align 4
  %addr.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %addr = load i32, ptr addrspace(1) %addr.p, align 4
  %wofs = shl i32 %lane, 4
  %wp = getelementptr inbounds i8, ptr addrspace(3) @st_ds_read_tr16.lds, i32 %wofs
  store <4 x i32> %data, ptr addrspace(3) %wp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_ds_read_tr16.lds, i32 %addr
  %r = call <4 x i16> @llvm.amdgcn.ds.read.tr16.b64.v4i16(ptr addrspace(3) %rp)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x i16> %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_global_load_lds_dwordx4: IN = 1, OUT = 4. in[l] = byte offset of lane l's source in the data region at in + 256 bytes; LDS (prefilled with 0xA5A5A5A5, then written by the DMA) read back at lane*16. For dwordx3 the 4th dword of each 16-byte slot shows whether the pad is written.
@st_global_load_lds_dwordx4.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_global_load_lds_dwordx4(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 4
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dwordx4.lds, i32 %pfofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %pfp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %src.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %src = load i32, ptr addrspace(1) %src.p, align 4
  %src64 = zext i32 %src to i64
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %g = getelementptr inbounds i8, ptr addrspace(1) %data, i64 %src64
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) @st_global_load_lds_dwordx4.lds, i32 16, i32 0, i32 0)
  %rofs = mul i32 %lane, 16
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dwordx4.lds, i32 %rofs
  %r = load <4 x i32>, ptr addrspace(3) %rp, align 16
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x i32> %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_global_load_lds_dwordx3: IN = 1, OUT = 4. in[l] = byte offset of lane l's source in the data region at in + 256 bytes; LDS (prefilled with 0xA5A5A5A5, then written by the DMA) read back at lane*16. For dwordx3 the 4th dword of each 16-byte slot shows whether the pad is written.
@st_global_load_lds_dwordx3.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_global_load_lds_dwordx3(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 4
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dwordx3.lds, i32 %pfofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %pfp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %src.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %src = load i32, ptr addrspace(1) %src.p, align 4
  %src64 = zext i32 %src to i64
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %g = getelementptr inbounds i8, ptr addrspace(1) %data, i64 %src64
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) @st_global_load_lds_dwordx3.lds, i32 12, i32 0, i32 0)
  %rofs = mul i32 %lane, 16
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dwordx3.lds, i32 %rofs
  %r = load <4 x i32>, ptr addrspace(3) %rp, align 16
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <4 x i32> %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_global_load_lds_dword: IN = 1, OUT = 1. in[l] = byte offset of lane l's source in the data region at in + 256 bytes; LDS (prefilled with 0xA5A5A5A5, then written by the DMA) read back at lane*4. For dwordx3 the 4th dword of each 16-byte slot shows whether the pad is written.
@st_global_load_lds_dword.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_global_load_lds_dword(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 1
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 4
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dword.lds, i32 %pfofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %pfp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %src.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %src = load i32, ptr addrspace(1) %src.p, align 4
  %src64 = zext i32 %src to i64
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %g = getelementptr inbounds i8, ptr addrspace(1) %data, i64 %src64
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) @st_global_load_lds_dword.lds, i32 4, i32 0, i32 0)
  %rofs = mul i32 %lane, 4
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_dword.lds, i32 %rofs
  %r = load i32, ptr addrspace(3) %rp, align 4
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_global_load_lds_ushort: IN = 1, OUT = 1. in[l] = byte offset of lane l's source in the data region at in + 256 bytes; LDS (prefilled with 0xA5A5A5A5, then written by the DMA) read back at lane*4. For dwordx3 the 4th dword of each 16-byte slot shows whether the pad is written.
@st_global_load_lds_ushort.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_global_load_lds_ushort(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 1
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 4
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_ushort.lds, i32 %pfofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %pfp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %src.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %src = load i32, ptr addrspace(1) %src.p, align 4
  %src64 = zext i32 %src to i64
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %g = getelementptr inbounds i8, ptr addrspace(1) %data, i64 %src64
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) @st_global_load_lds_ushort.lds, i32 2, i32 0, i32 0)
  %rofs = mul i32 %lane, 4
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_ushort.lds, i32 %rofs
  %r = load i32, ptr addrspace(3) %rp, align 4
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_global_load_lds_ubyte: IN = 1, OUT = 1. in[l] = byte offset of lane l's source in the data region at in + 256 bytes; LDS (prefilled with 0xA5A5A5A5, then written by the DMA) read back at lane*4. For dwordx3 the 4th dword of each 16-byte slot shows whether the pad is written.
@st_global_load_lds_ubyte.lds = internal addrspace(3) global [1024 x i8] poison, align 16
define amdgpu_kernel void @st_global_load_lds_ubyte(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 1
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 4
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_ubyte.lds, i32 %pfofs
  store <4 x i32> <i32 -1515870811, i32 -1515870811, i32 -1515870811, i32 -1515870811>, ptr addrspace(3) %pfp, align 16
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %src.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %src = load i32, ptr addrspace(1) %src.p, align 4
  %src64 = zext i32 %src to i64
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %g = getelementptr inbounds i8, ptr addrspace(1) %data, i64 %src64
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %g, ptr addrspace(3) @st_global_load_lds_ubyte.lds, i32 1, i32 0, i32 0)
  %rofs = mul i32 %lane, 4
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_global_load_lds_ubyte.lds, i32 %rofs
  %r = load i32, ptr addrspace(3) %rp, align 4
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_buffer_load_lds_dword: IN = 1, OUT = 1. Raw buffer of num_records = 200 bytes at in + 256; in[l] = voffset; lanes past 200 bytes are out of range (LDS prefilled with 0xA5A5A5A5).
@st_buffer_load_lds_dword.lds = internal addrspace(3) global [256 x i8] poison, align 16
define amdgpu_kernel void @st_buffer_load_lds_dword(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 1
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %pfofs = shl i32 %lane, 2
  %pfp = getelementptr inbounds i8, ptr addrspace(3) @st_buffer_load_lds_dword.lds, i32 %pfofs
  store i32 -1515870811, ptr addrspace(3) %pfp, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %voff.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %voff = load i32, ptr addrspace(1) %voff.p, align 4
  %data = getelementptr inbounds i8, ptr addrspace(1) %in, i64 256
  %rsrc = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %data, i16 0, i64 200, i32 159744)
  call void @llvm.amdgcn.raw.ptr.buffer.load.lds(ptr addrspace(8) %rsrc, ptr addrspace(3) @st_buffer_load_lds_dword.lds, i32 4, i32 %voff, i32 0, i32 0, i32 0)
  %rofs = shl i32 %lane, 2
  %rp = getelementptr inbounds i8, ptr addrspace(3) @st_buffer_load_lds_dword.lds, i32 %rofs
  %r = load i32, ptr addrspace(3) %rp, align 4
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %r, ptr addrspace(1) %st0.p, align 4
  ret void
}

; st_cvt_pk_f32_to_fp8_bf8: IN = 3, OUT = 4. a, b, old -> fp8 word 0, fp8 word 1, bf8 word 0, bf8 word 1.
define amdgpu_kernel void @st_cvt_pk_f32_to_fp8_bf8(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 3
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load float, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 1
  %b = load float, ptr addrspace(1) %b.p, align 4
  %old.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %old = load i32, ptr addrspace(1) %old.p, align 4
  %r0 = call i32 @llvm.amdgcn.cvt.pk.fp8.f32(float %a, float %b, i32 %old, i1 false)
  %r1 = call i32 @llvm.amdgcn.cvt.pk.fp8.f32(float %a, float %b, i32 %old, i1 true)
  %r2 = call i32 @llvm.amdgcn.cvt.pk.bf8.f32(float %a, float %b, i32 %old, i1 false)
  %r3 = call i32 @llvm.amdgcn.cvt.pk.bf8.f32(float %a, float %b, i32 %old, i1 true)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %r0, ptr addrspace(1) %st0.p, align 4
  %st1.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store i32 %r1, ptr addrspace(1) %st1.p, align 4
  %st2.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store i32 %r2, ptr addrspace(1) %st2.p, align 4
  %st3.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store i32 %r3, ptr addrspace(1) %st3.p, align 4
  ret void
}

; st_cvt_sr_f32_to_fp8_bf8: IN = 3, OUT = 8. a, random, old -> fp8 bytes 0..3, bf8 bytes 0..3.
define amdgpu_kernel void @st_cvt_sr_f32_to_fp8_bf8(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 3
  %obase = mul i32 %lane, 8
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load float, ptr addrspace(1) %a.p, align 4
  %rnd.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 1
  %rnd = load i32, ptr addrspace(1) %rnd.p, align 4
  %old.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %old = load i32, ptr addrspace(1) %old.p, align 4
  %f0 = call i32 @llvm.amdgcn.cvt.sr.fp8.f32(float %a, i32 %rnd, i32 %old, i32 0)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %f0, ptr addrspace(1) %st0.p, align 4
  %b0 = call i32 @llvm.amdgcn.cvt.sr.bf8.f32(float %a, i32 %rnd, i32 %old, i32 0)
  %st4.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 4
  store i32 %b0, ptr addrspace(1) %st4.p, align 4
  %f1 = call i32 @llvm.amdgcn.cvt.sr.fp8.f32(float %a, i32 %rnd, i32 %old, i32 1)
  %st1.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store i32 %f1, ptr addrspace(1) %st1.p, align 4
  %b1 = call i32 @llvm.amdgcn.cvt.sr.bf8.f32(float %a, i32 %rnd, i32 %old, i32 1)
  %st5.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 5
  store i32 %b1, ptr addrspace(1) %st5.p, align 4
  %f2 = call i32 @llvm.amdgcn.cvt.sr.fp8.f32(float %a, i32 %rnd, i32 %old, i32 2)
  %st2.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store i32 %f2, ptr addrspace(1) %st2.p, align 4
  %b2 = call i32 @llvm.amdgcn.cvt.sr.bf8.f32(float %a, i32 %rnd, i32 %old, i32 2)
  %st6.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 6
  store i32 %b2, ptr addrspace(1) %st6.p, align 4
  %f3 = call i32 @llvm.amdgcn.cvt.sr.fp8.f32(float %a, i32 %rnd, i32 %old, i32 3)
  %st3.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store i32 %f3, ptr addrspace(1) %st3.p, align 4
  %b3 = call i32 @llvm.amdgcn.cvt.sr.bf8.f32(float %a, i32 %rnd, i32 %old, i32 3)
  %st7.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 7
  store i32 %b3, ptr addrspace(1) %st7.p, align 4
  ret void
}

; st_cvt_fp8_bf8_to_f32: IN = 1, OUT = 16. x -> fp8 bytes 0..3, bf8 bytes 0..3, pk fp8 word 0/1, pk bf8 word 0/1.
define amdgpu_kernel void @st_cvt_fp8_bf8_to_f32(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 1
  %obase = mul i32 %lane, 16
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %x.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %x = load i32, ptr addrspace(1) %x.p, align 4
  %f0 = call float @llvm.amdgcn.cvt.f32.fp8(i32 %x, i32 0)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store float %f0, ptr addrspace(1) %st0.p, align 4
  %b0 = call float @llvm.amdgcn.cvt.f32.bf8(i32 %x, i32 0)
  %st4.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 4
  store float %b0, ptr addrspace(1) %st4.p, align 4
  %f1 = call float @llvm.amdgcn.cvt.f32.fp8(i32 %x, i32 1)
  %st1.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store float %f1, ptr addrspace(1) %st1.p, align 4
  %b1 = call float @llvm.amdgcn.cvt.f32.bf8(i32 %x, i32 1)
  %st5.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 5
  store float %b1, ptr addrspace(1) %st5.p, align 4
  %f2 = call float @llvm.amdgcn.cvt.f32.fp8(i32 %x, i32 2)
  %st2.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store float %f2, ptr addrspace(1) %st2.p, align 4
  %b2 = call float @llvm.amdgcn.cvt.f32.bf8(i32 %x, i32 2)
  %st6.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 6
  store float %b2, ptr addrspace(1) %st6.p, align 4
  %f3 = call float @llvm.amdgcn.cvt.f32.fp8(i32 %x, i32 3)
  %st3.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store float %f3, ptr addrspace(1) %st3.p, align 4
  %b3 = call float @llvm.amdgcn.cvt.f32.bf8(i32 %x, i32 3)
  %st7.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 7
  store float %b3, ptr addrspace(1) %st7.p, align 4
  %pf0 = call <2 x float> @llvm.amdgcn.cvt.pk.f32.fp8(i32 %x, i1 false)
  %st8.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 8
  store <2 x float> %pf0, ptr addrspace(1) %st8.p, align 4
  %pb0 = call <2 x float> @llvm.amdgcn.cvt.pk.f32.bf8(i32 %x, i1 false)
  %st12.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 12
  store <2 x float> %pb0, ptr addrspace(1) %st12.p, align 4
  %pf1 = call <2 x float> @llvm.amdgcn.cvt.pk.f32.fp8(i32 %x, i1 true)
  %st10.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 10
  store <2 x float> %pf1, ptr addrspace(1) %st10.p, align 4
  %pb1 = call <2 x float> @llvm.amdgcn.cvt.pk.f32.bf8(i32 %x, i1 true)
  %st14.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 14
  store <2 x float> %pb1, ptr addrspace(1) %st14.p, align 4
  ret void
}

; st_cvt_scalef32: IN = 6, OUT = 28. a, b, scale, old, x, random -> pk fp8/bf8 words 0/1 (4), pk f32<-fp8/bf8 words 0/1 (8), f32<-fp8 bytes (4), f32<-bf8 bytes (4), sr fp8 bytes (4), sr bf8 bytes (4).
define amdgpu_kernel void @st_cvt_scalef32(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 6
  %obase = mul i32 %lane, 28
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %a = load float, ptr addrspace(1) %a.p, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 1
  %b = load float, ptr addrspace(1) %b.p, align 4
  %s.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %s = load float, ptr addrspace(1) %s.p, align 4
  %old.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 3
  %old = load <2 x i16>, ptr addrspace(1) %old.p, align 4
  %x.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %x = load i32, ptr addrspace(1) %x.p, align 4
  %rnd.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 5
  %rnd = load i32, ptr addrspace(1) %rnd.p, align 4
  %pf0 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16> %old, float %a, float %b, float %s, i1 false)
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store <2 x i16> %pf0, ptr addrspace(1) %st0.p, align 4
  %pb0 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16> %old, float %a, float %b, float %s, i1 false)
  %st2.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store <2 x i16> %pb0, ptr addrspace(1) %st2.p, align 4
  %uf0 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32 %x, float %s, i1 false)
  %st4.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 4
  store <2 x float> %uf0, ptr addrspace(1) %st4.p, align 4
  %ub0 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32 %x, float %s, i1 false)
  %st8.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 8
  store <2 x float> %ub0, ptr addrspace(1) %st8.p, align 4
  %pf1 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.fp8.f32(<2 x i16> %old, float %a, float %b, float %s, i1 true)
  %st1.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store <2 x i16> %pf1, ptr addrspace(1) %st1.p, align 4
  %pb1 = call <2 x i16> @llvm.amdgcn.cvt.scalef32.pk.bf8.f32(<2 x i16> %old, float %a, float %b, float %s, i1 true)
  %st3.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store <2 x i16> %pb1, ptr addrspace(1) %st3.p, align 4
  %uf1 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.fp8(i32 %x, float %s, i1 true)
  %st6.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 6
  store <2 x float> %uf1, ptr addrspace(1) %st6.p, align 4
  %ub1 = call <2 x float> @llvm.amdgcn.cvt.scalef32.pk.f32.bf8(i32 %x, float %s, i1 true)
  %st10.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 10
  store <2 x float> %ub1, ptr addrspace(1) %st10.p, align 4
  %ef0 = call float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32 %x, float %s, i32 0)
  %st12.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 12
  store float %ef0, ptr addrspace(1) %st12.p, align 4
  %eb0 = call float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32 %x, float %s, i32 0)
  %st16.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 16
  store float %eb0, ptr addrspace(1) %st16.p, align 4
  %sf0 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 0)
  %st20.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 20
  store i32 %sf0, ptr addrspace(1) %st20.p, align 4
  %sb0 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 0)
  %st24.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 24
  store i32 %sb0, ptr addrspace(1) %st24.p, align 4
  %ef1 = call float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32 %x, float %s, i32 1)
  %st13.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 13
  store float %ef1, ptr addrspace(1) %st13.p, align 4
  %eb1 = call float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32 %x, float %s, i32 1)
  %st17.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 17
  store float %eb1, ptr addrspace(1) %st17.p, align 4
  %sf1 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 1)
  %st21.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 21
  store i32 %sf1, ptr addrspace(1) %st21.p, align 4
  %sb1 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 1)
  %st25.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 25
  store i32 %sb1, ptr addrspace(1) %st25.p, align 4
  %ef2 = call float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32 %x, float %s, i32 2)
  %st14.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 14
  store float %ef2, ptr addrspace(1) %st14.p, align 4
  %eb2 = call float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32 %x, float %s, i32 2)
  %st18.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 18
  store float %eb2, ptr addrspace(1) %st18.p, align 4
  %sf2 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 2)
  %st22.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 22
  store i32 %sf2, ptr addrspace(1) %st22.p, align 4
  %sb2 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 2)
  %st26.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 26
  store i32 %sb2, ptr addrspace(1) %st26.p, align 4
  %ef3 = call float @llvm.amdgcn.cvt.scalef32.f32.fp8(i32 %x, float %s, i32 3)
  %st15.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 15
  store float %ef3, ptr addrspace(1) %st15.p, align 4
  %eb3 = call float @llvm.amdgcn.cvt.scalef32.f32.bf8(i32 %x, float %s, i32 3)
  %st19.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 19
  store float %eb3, ptr addrspace(1) %st19.p, align 4
  %sf3 = call i32 @llvm.amdgcn.cvt.scalef32.sr.fp8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 3)
  %st23.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 23
  store i32 %sf3, ptr addrspace(1) %st23.p, align 4
  %sb3 = call i32 @llvm.amdgcn.cvt.scalef32.sr.bf8.f32(i32 %x, float %a, i32 %rnd, float %s, i32 3)
  %st27.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 27
  store i32 %sb3, ptr addrspace(1) %st27.p, align 4
  ret void
}

; st_permlane_swap: IN = 2, OUT = 4. x (vdst), y (vsrc) -> permlane16 swap results, permlane32 swap results.
define amdgpu_kernel void @st_permlane_swap(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 2
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %x.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 0
  %x = load i32, ptr addrspace(1) %x.p, align 4
  %y.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 1
  %y = load i32, ptr addrspace(1) %y.p, align 4
  %p16 = call {i32, i32} @llvm.amdgcn.permlane16.swap(i32 %x, i32 %y, i1 false, i1 false)
  %p32 = call {i32, i32} @llvm.amdgcn.permlane32.swap(i32 %x, i32 %y, i1 false, i1 false)
  %p16a = extractvalue {i32, i32} %p16, 0
  %p16b = extractvalue {i32, i32} %p16, 1
  %p32a = extractvalue {i32, i32} %p32, 0
  %p32b = extractvalue {i32, i32} %p32, 1
  %st0.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %p16a, ptr addrspace(1) %st0.p, align 4
  %st1.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store i32 %p16b, ptr addrspace(1) %st1.p, align 4
  %st2.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store i32 %p32a, ptr addrspace(1) %st2.p, align 4
  %st3.p = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store i32 %p32b, ptr addrspace(1) %st3.p, align 4
  ret void
}

; st_valu_extras: IN = 6, OUT = 8. a (2 floats), b (2), c (2) -> v_pk_fma_f32 (2), v_pk_mul_f32 (2), v_pk_add_f32 (2), v_cvt_pk_bf16_f32 of a (1), v_max3_f32 of a0, b0, c0 (1).
define amdgpu_kernel void @st_valu_extras(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 6
  %obase = mul i32 %lane, 8
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a = load <2 x float>, ptr addrspace(1) %ip, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %b = load <2 x float>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 4
  %c = load <2 x float>, ptr addrspace(1) %c.p, align 4
  %fma = call <2 x float> @llvm.fma.v2f32(<2 x float> %a, <2 x float> %b, <2 x float> %c)
  %mul = fmul <2 x float> %a, %b
  %add = fadd <2 x float> %a, %b
  %bf = fptrunc <2 x float> %a to <2 x bfloat>
  %bfi = bitcast <2 x bfloat> %bf to i32
  %a0 = extractelement <2 x float> %a, i32 0
  %b0 = extractelement <2 x float> %b, i32 0
  %c0 = extractelement <2 x float> %c, i32 0
  %m1 = call float @llvm.maxnum.f32(float %a0, float %b0)
  %m = call float @llvm.maxnum.f32(float %m1, float %c0)
  store <2 x float> %fma, ptr addrspace(1) %op, align 4
  %o2 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store <2 x float> %mul, ptr addrspace(1) %o2, align 4
  %o4 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 4
  store <2 x float> %add, ptr addrspace(1) %o4, align 4
  %o6 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 6
  store i32 %bfi, ptr addrspace(1) %o6, align 4
  %o7 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 7
  store float %m, ptr addrspace(1) %o7, align 4
  ret void
}

; st_mfma_f8_f8_16x16x128_nan: IN = 20, OUT = 4. Unscaled fp8 x fp8 (the attention
; kernel's QK and PV instruction): A fp8 (8 dwords), B fp8 (8), C (4); A holds NaN codes
; that B multiplies by 0 in some columns (a masked token's NaN V, docs/numerics.md).
define amdgpu_kernel void @st_mfma_f8_f8_16x16x128_nan(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 20
  %obase = mul i32 %lane, 4
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a = load <8 x i32>, ptr addrspace(1) %ip, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 8
  %b = load <8 x i32>, ptr addrspace(1) %b.p, align 4
  %c.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 16
  %c = load <4 x float>, ptr addrspace(1) %c.p, align 4
  %d = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32> %a, <8 x i32> %b, <4 x float> %c, i32 0, i32 0, i32 0, i32 0, i32 0, i32 0)
  store <4 x float> %d, ptr addrspace(1) %op, align 4
  ret void
}

; st_exp_f32_denormal: IN = 1, OUT = 1. x -> v_exp_f32(x) (llvm.amdgcn.exp2 is the bare
; instruction), under f32 denormal mode 3 (no flushing): does a result below 2^-126 come
; out as a denormal or as 0 (CoreChoices.h kExpF32FlushesDenormalResults)?
define amdgpu_kernel void @st_exp_f32_denormal(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %lane64 = zext i32 %lane to i64
  %ip = getelementptr inbounds float, ptr addrspace(1) %in, i64 %lane64
  %op = getelementptr inbounds float, ptr addrspace(1) %out, i64 %lane64
  %x = load float, ptr addrspace(1) %ip, align 4
  %r = call float @llvm.amdgcn.exp2.f32(float %x)
  store float %r, ptr addrspace(1) %op, align 4
  ret void
}

; st_permlane16_swap_one_wait_state: IN = 4, OUT = 2. a, b (f32), x, y -> x, y after
;   v_cvt_pk_fp8_f32 x, a, b op_sel:[0,0,1]   (writes x[31:16], keeps x[15:0])
;   s_nop 0                                   (one wait state; LLVM inserts two)
;   v_permlane16_swap_b32 x, y
; the sequence of a production gfx950 MLA kernel. Inline assembly, so llc's hazard
; recognizer adds nothing. A result equal to the model means the swap saw the converted
; x after one wait state; the old x[31:16] in the result means it needs more
; (docs/emulator-fidelity.md, "Wait states"). The emulator's strict mode reports it.
define amdgpu_kernel void @st_permlane16_swap_one_wait_state(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %ibase = mul i32 %lane, 4
  %obase = mul i32 %lane, 2
  %ibase64 = zext i32 %ibase to i64
  %obase64 = zext i32 %obase to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %ibase64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %a = load float, ptr addrspace(1) %ip, align 4
  %b.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 1
  %b = load float, ptr addrspace(1) %b.p, align 4
  %x.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 2
  %x = load i32, ptr addrspace(1) %x.p, align 4
  %y.p = getelementptr inbounds i32, ptr addrspace(1) %ip, i64 3
  %y = load i32, ptr addrspace(1) %y.p, align 4
  %r = call {i32, i32} asm sideeffect "v_cvt_pk_fp8_f32 $0, $2, $3 op_sel:[0,0,1]\0As_nop 0\0Av_permlane16_swap_b32 $0, $1", "=v,=v,v,v,0,1"(float %a, float %b, i32 %x, i32 %y)
  %rx = extractvalue {i32, i32} %r, 0
  %ry = extractvalue {i32, i32} %r, 1
  store i32 %rx, ptr addrspace(1) %op, align 4
  %o1 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store i32 %ry, ptr addrspace(1) %o1, align 4
  ret void
}

; st_dpp_row_newbcast: IN = 1, OUT = 9. x -> for j = 0..7 the attention kernel's DMA
; source-page sequence (docs/attention-kernel.md, "DMA source pages"): v_mov_b32_dpp
; row_newbcast:2j row_mask:0x3 (old undefined), then row_newbcast:2j+1 row_mask:0xc on
; it, so lanes 0-31 hold lane 2j of their row and lanes 32-63 lane 2j+1; then
; row_newbcast:5 row_mask:0x5 over x itself: rows 0 and 2 take lane 5 of their row,
; rows 1 and 3 keep x (a disabled row is not written; ISA ref 9.6).
define amdgpu_kernel void @st_dpp_row_newbcast(ptr addrspace(1) %in, ptr addrspace(1) %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %lane64 = zext i32 %lane to i64
  %ip = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %lane64
  %x = load i32, ptr addrspace(1) %ip, align 4
  %obase = mul i32 %lane, 9
  %obase64 = zext i32 %obase to i64
  %op = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %obase64
  %h0 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 336, i32 3, i32 15, i1 false)
  %p0 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h0, i32 %x, i32 337, i32 12, i32 15, i1 false)
  %o0 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 0
  store i32 %p0, ptr addrspace(1) %o0, align 4
  %h1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 338, i32 3, i32 15, i1 false)
  %p1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h1, i32 %x, i32 339, i32 12, i32 15, i1 false)
  %o1 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 1
  store i32 %p1, ptr addrspace(1) %o1, align 4
  %h2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 340, i32 3, i32 15, i1 false)
  %p2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h2, i32 %x, i32 341, i32 12, i32 15, i1 false)
  %o2 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 2
  store i32 %p2, ptr addrspace(1) %o2, align 4
  %h3 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 342, i32 3, i32 15, i1 false)
  %p3 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h3, i32 %x, i32 343, i32 12, i32 15, i1 false)
  %o3 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 3
  store i32 %p3, ptr addrspace(1) %o3, align 4
  %h4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 344, i32 3, i32 15, i1 false)
  %p4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h4, i32 %x, i32 345, i32 12, i32 15, i1 false)
  %o4 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 4
  store i32 %p4, ptr addrspace(1) %o4, align 4
  %h5 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 346, i32 3, i32 15, i1 false)
  %p5 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h5, i32 %x, i32 347, i32 12, i32 15, i1 false)
  %o5 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 5
  store i32 %p5, ptr addrspace(1) %o5, align 4
  %h6 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 348, i32 3, i32 15, i1 false)
  %p6 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h6, i32 %x, i32 349, i32 12, i32 15, i1 false)
  %o6 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 6
  store i32 %p6, ptr addrspace(1) %o6, align 4
  %h7 = call i32 @llvm.amdgcn.update.dpp.i32(i32 poison, i32 %x, i32 350, i32 3, i32 15, i1 false)
  %p7 = call i32 @llvm.amdgcn.update.dpp.i32(i32 %h7, i32 %x, i32 351, i32 12, i32 15, i1 false)
  %o7 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 7
  store i32 %p7, ptr addrspace(1) %o7, align 4
  %m = call i32 @llvm.amdgcn.update.dpp.i32(i32 %x, i32 %x, i32 341, i32 5, i32 15, i1 false)
  %o8 = getelementptr inbounds i32, ptr addrspace(1) %op, i64 8
  store i32 %m, ptr addrspace(1) %o8, align 4
  ret void
}

declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)

declare <2 x float> @llvm.fma.v2f32(<2 x float>, <2 x float>, <2 x float>)
declare float @llvm.maxnum.f32(float, float)

declare void @llvm.amdgcn.s.barrier()

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "target-cpu"="gfx950" }
