; A 128x128x128 scaled-fp8 GEMM tile for the emulator's end-to-end test (issue 5).
;
;   D[m][n] = sum_b 2^(sa[m][b]-127) 2^(sb[n][b]-127) sum_{k in block b} A[m][k] B[k][n]
;
; Inputs: At = A transposed (At[k][m], m contiguous, 16 KiB), B[k][n] (n contiguous,
; 16 KiB), sa[m][4] and sb[n][4] E8M0 bytes, D f32 row-major. One workgroup of 4 waves.
; Data flow: global_load_lds_dwordx4 (llvm.amdgcn.global.load.lds) brings At to LDS
; [0, 16K) and B to [16K, 32K); after a barrier every wave reads MFMA operands with
; ds_read_b64_tr_b8 (the tiles are M/N-contiguous, the operands K-contiguous) and runs
; v_mfma_scale_f32_16x16x128_f8f6f4 on 16 of the 64 16x16 output tiles.
;
; Operand map (reference 1.4): lane l, g = l/16, r = l%16 holds row r of the tile and
; bytes e = k-offsets 64*(e/16) + 16*g + e%16; read i (0..3) of a lane fetches rows
; k0 = 16g + 8*(i%2) + 64*(i/2) .. k0+7 of column r, i.e. lane t of the group points at
; LDS row k0 + t/2, column base + 8*(t%2) (reference 2.2).
target triple = "amdgcn-amd-amdhsa"

@lds = internal addrspace(3) global [32768 x i8] poison, align 16

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare void @llvm.amdgcn.global.load.lds(ptr addrspace(1), ptr addrspace(3), i32, i32, i32)
declare <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3))
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(<8 x i32>, <8 x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
declare void @llvm.amdgcn.s.barrier()
declare void @llvm.amdgcn.s.waitcnt(i32)

; Reads the 32-byte MFMA operand of tile column/row base %base from the LDS matrix at
; %matrix (128-byte row pitch, K rows).
define internal <8 x i32> @read_operand(ptr addrspace(3) %matrix, i32 %base, i32 %lane) alwaysinline {
entry:
  %g = lshr i32 %lane, 4
  %t = and i32 %lane, 15
  %thalf = lshr i32 %t, 1
  %todd = and i32 %t, 1
  %col8 = shl i32 %todd, 3
  %col = add i32 %base, %col8
  %g16 = shl i32 %g, 4
  %row0 = add i32 %g16, %thalf
  %r0 = call <2 x i32> @read8(ptr addrspace(3) %matrix, i32 %row0, i32 %col)
  %row1 = add i32 %row0, 8
  %r1 = call <2 x i32> @read8(ptr addrspace(3) %matrix, i32 %row1, i32 %col)
  %row2 = add i32 %row0, 64
  %r2 = call <2 x i32> @read8(ptr addrspace(3) %matrix, i32 %row2, i32 %col)
  %row3 = add i32 %row0, 72
  %r3 = call <2 x i32> @read8(ptr addrspace(3) %matrix, i32 %row3, i32 %col)
  %lo = shufflevector <2 x i32> %r0, <2 x i32> %r1, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %hi = shufflevector <2 x i32> %r2, <2 x i32> %r3, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %all = shufflevector <4 x i32> %lo, <4 x i32> %hi, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  ret <8 x i32> %all
}

define internal <2 x i32> @read8(ptr addrspace(3) %matrix, i32 %row, i32 %col) alwaysinline {
entry:
  %rowoff = shl i32 %row, 7
  %off = add i32 %rowoff, %col
  %p = getelementptr inbounds i8, ptr addrspace(3) %matrix, i32 %off
  %v = call <2 x i32> @llvm.amdgcn.ds.read.tr8.b64.v2i32(ptr addrspace(3) %p)
  ret <2 x i32> %v
}

; The E8M0 scale this lane supplies for tile row/column base %base: row base + l%16,
; k block l/16.
define internal i32 @load_scale(ptr addrspace(1) %scales, i32 %base, i32 %lane) alwaysinline {
entry:
  %r = and i32 %lane, 15
  %blk = lshr i32 %lane, 4
  %row = add i32 %base, %r
  %row4 = shl i32 %row, 2
  %idx = add i32 %row4, %blk
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds i8, ptr addrspace(1) %scales, i64 %idx64
  %s = load i8, ptr addrspace(1) %p, align 1
  %s32 = zext i8 %s to i32
  ret i32 %s32
}

define amdgpu_kernel void @fp8_gemm_tile(ptr addrspace(1) noalias %at, ptr addrspace(1) noalias %b,
                                         ptr addrspace(1) noalias %sa, ptr addrspace(1) noalias %sb,
                                         ptr addrspace(1) noalias %d) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %lane = and i32 %tid, 63
  %wv = lshr i32 %tid, 6
  %wave = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %wv)
  %laneoff = shl i32 %lane, 4
  %waveoff = shl i32 %wave, 10
  %ldsB = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 16384
  br label %dma

dma:                                  ; 4 x 4 KiB per matrix; each wave moves 1 KiB
  %i = phi i32 [ 0, %entry ], [ %inext, %dma ]
  %chunk = shl i32 %i, 12
  %wavechunk = add i32 %chunk, %waveoff
  %gofs = add i32 %wavechunk, %laneoff
  %gofs64 = zext i32 %gofs to i64
  %srcA = getelementptr inbounds i8, ptr addrspace(1) %at, i64 %gofs64
  %srcB = getelementptr inbounds i8, ptr addrspace(1) %b, i64 %gofs64
  %dstA = getelementptr inbounds i8, ptr addrspace(3) @lds, i32 %wavechunk
  %dstB = getelementptr inbounds i8, ptr addrspace(3) %ldsB, i32 %wavechunk
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %srcA, ptr addrspace(3) %dstA, i32 16, i32 0, i32 0)
  call void @llvm.amdgcn.global.load.lds(ptr addrspace(1) %srcB, ptr addrspace(3) %dstB, i32 16, i32 0, i32 0)
  %inext = add i32 %i, 1
  %more = icmp ult i32 %inext, 4
  br i1 %more, label %dma, label %sync

sync:
  ; Every wave waits for its own DMAs (vmcnt(0): 0xF70 = expcnt 7, lgkmcnt 15, vmcnt 0)
  ; before the barrier, so that after it all of LDS is written. Without this wait
  ; LLVM waits only after the barrier, for the wave's own DMAs: a cross-wave race the
  ; emulator must report (the "nowait" build of this file deletes the next line).
  call void @llvm.amdgcn.s.waitcnt(i32 3952) ; MLA-EMU-WAIT-BEFORE-BARRIER
  call void @llvm.amdgcn.s.barrier()
  br label %tiles

tiles:                                ; wave w computes tiles 16w .. 16w+15
  %j = phi i32 [ 0, %sync ], [ %jnext, %nexttile ]
  %w16 = shl i32 %wave, 4
  %tile = add i32 %w16, %j
  %mt = lshr i32 %tile, 3
  %nt = and i32 %tile, 7
  %mbase = shl i32 %mt, 4
  %nbase = shl i32 %nt, 4
  %opA = call <8 x i32> @read_operand(ptr addrspace(3) @lds, i32 %mbase, i32 %lane)
  %opB = call <8 x i32> @read_operand(ptr addrspace(3) %ldsB, i32 %nbase, i32 %lane)
  %scaleA = call i32 @load_scale(ptr addrspace(1) %sa, i32 %mbase, i32 %lane)
  %scaleB = call i32 @load_scale(ptr addrspace(1) %sb, i32 %nbase, i32 %lane)
  %acc = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v8i32.v8i32(
      <8 x i32> %opA, <8 x i32> %opB, <4 x float> zeroinitializer,
      i32 0, i32 0, i32 0, i32 %scaleA, i32 0, i32 %scaleB)
  ; D[mbase + 4*(l/16) + v][nbase + l%16] = acc[v]
  %g = lshr i32 %lane, 4
  %r = and i32 %lane, 15
  %g4 = shl i32 %g, 2
  %row = add i32 %mbase, %g4
  %col = add i32 %nbase, %r
  %rowoff = shl i32 %row, 7
  %idx0 = add i32 %rowoff, %col
  br label %store

store:
  %v = phi i32 [ 0, %tiles ], [ %vnext, %store ]
  %vrow = shl i32 %v, 7
  %idx = add i32 %idx0, %vrow
  %idx64 = zext i32 %idx to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %d, i64 %idx64
  %x = extractelement <4 x float> %acc, i32 %v
  store float %x, ptr addrspace(1) %p, align 4
  %vnext = add i32 %v, 1
  %vmore = icmp ult i32 %vnext, 4
  br i1 %vmore, label %store, label %nexttile

nexttile:
  %jnext = add i32 %j, 1
  %jmore = icmp ult i32 %jnext, 16
  br i1 %jmore, label %tiles, label %done

done:
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="256,256" "target-cpu"="gfx950" }
