; Memory-heavy: each workgroup streams a chunk of `in` through LDS to `out`
; (global_load_dwordx4 -> ds_write_b128 -> s_barrier -> ds_read_b128 -> global_store_dwordx4).
@stage = internal addrspace(3) global [256 x <4 x float>] poison, align 16

define amdgpu_kernel void @memory_heavy(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %chunks) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %rev = sub i32 255, %tid
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %kn, %loop ]
  %c0 = mul i32 %bid, %chunks
  %c = add i32 %c0, %k
  %cb = mul i32 %c, 256
  %i = add i32 %cb, %tid
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %i
  %v = load <4 x float>, ptr addrspace(1) %p, align 16
  %l = getelementptr [256 x <4 x float>], ptr addrspace(3) @stage, i32 0, i32 %tid
  store <4 x float> %v, ptr addrspace(3) %l, align 16
  call void @llvm.amdgcn.s.barrier()
  %lr = getelementptr [256 x <4 x float>], ptr addrspace(3) @stage, i32 0, i32 %rev
  %w = load <4 x float>, ptr addrspace(3) %lr, align 16
  call void @llvm.amdgcn.s.barrier()
  %q = getelementptr <4 x float>, ptr addrspace(1) %out, i32 %i
  store <4 x float> %w, ptr addrspace(1) %q, align 16
  %kn = add i32 %k, 1
  %more = icmp slt i32 %kn, %chunks
  br i1 %more, label %loop, label %done
done:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
