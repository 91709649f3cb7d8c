; Scalar and 64-bit arguments: out[offset + i] = (float)(i * scale) + bias for
; i < count, with a 64-bit element offset (the buffer may exceed 4 GiB).
define amdgpu_kernel void @scalar_args(ptr addrspace(1) %out, i64 %offset, i32 %scale, float %bias, i32 %count) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %b0 = mul i32 %bid, 64
  %i = add i32 %b0, %tid
  %ok = icmp ult i32 %i, %count
  br i1 %ok, label %do, label %end
do:
  %m = mul i32 %i, %scale
  %f = sitofp i32 %m to float
  %v = fadd float %f, %bias
  %i64 = zext i32 %i to i64
  %e = add i64 %offset, %i64
  %p = getelementptr float, ptr addrspace(1) %out, i64 %e
  store float %v, ptr addrspace(1) %p
  br label %end
end:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
