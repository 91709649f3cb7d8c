; LDS transpose of a 32x32 float tile per workgroup (block 32x8, 4 waves): each
; work-item stores 4 elements into LDS, s_barrier, then reads the transposed ones.
; in and out are n x n row-major with n a multiple of 32.
@tile = internal addrspace(3) global [32 x [33 x float]] poison, align 4

define amdgpu_kernel void @lds_transpose(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %bx = call i32 @llvm.amdgcn.workgroup.id.x()
  %by = call i32 @llvm.amdgcn.workgroup.id.y()
  %x0 = mul i32 %bx, 32
  %x = add i32 %x0, %tx
  %y0 = mul i32 %by, 32
  br label %load
load:
  %j = phi i32 [ 0, %entry ], [ %jn, %load ]
  %r = add i32 %ty, %j
  %gy = add i32 %y0, %r
  %rowoff = mul i32 %gy, %n
  %gi = add i32 %rowoff, %x
  %gp = getelementptr float, ptr addrspace(1) %in, i32 %gi
  %v = load float, ptr addrspace(1) %gp
  %lp = getelementptr [32 x [33 x float]], ptr addrspace(3) @tile, i32 0, i32 %r, i32 %tx
  store float %v, ptr addrspace(3) %lp
  %jn = add i32 %j, 8
  %more = icmp slt i32 %jn, 32
  br i1 %more, label %load, label %sync
sync:
  call void @llvm.amdgcn.s.barrier()
  %ox = add i32 %y0, %tx
  br label %store
store:
  %k = phi i32 [ 0, %sync ], [ %kn, %store ]
  %c = add i32 %ty, %k
  %lq = getelementptr [32 x [33 x float]], ptr addrspace(3) @tile, i32 0, i32 %tx, i32 %c
  %w = load float, ptr addrspace(3) %lq
  %oy = add i32 %x0, %c
  %orow = mul i32 %oy, %n
  %oi = add i32 %orow, %ox
  %op = getelementptr float, ptr addrspace(1) %out, i32 %oi
  store float %w, ptr addrspace(1) %op
  %kn = add i32 %k, 8
  %more2 = icmp slt i32 %kn, 32
  br i1 %more2, label %store, label %done
done:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare void @llvm.amdgcn.s.barrier()
