; 2-D grid: each work-item writes (global x) * 65536 + (global y) at out[gy * width + gx],
; using workgroup ids and work-item ids in x and y.
define amdgpu_kernel void @grid2d(ptr addrspace(1) %out, i32 %width) {
  %tx = call i32 @llvm.amdgcn.workitem.id.x()
  %ty = call i32 @llvm.amdgcn.workitem.id.y()
  %bx = call i32 @llvm.amdgcn.workgroup.id.x()
  %by = call i32 @llvm.amdgcn.workgroup.id.y()
  %bdx = mul i32 %bx, 16
  %gx = add i32 %bdx, %tx
  %bdy = mul i32 %by, 4
  %gy = add i32 %bdy, %ty
  %row = mul i32 %gy, %width
  %idx = add i32 %row, %gx
  %hi = shl i32 %gx, 16
  %v = or i32 %hi, %gy
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %idx
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
