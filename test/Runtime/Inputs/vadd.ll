; Vector add: c[i] = a[i] + b[i] for i < n, 256 work-items per workgroup. The argument
; type names (OpenCL kernel_arg_type, emitted as .type_name) let mla-run check kinds.
define amdgpu_kernel void @vadd(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) !kernel_arg_type !0 {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %bs = mul i32 %bid, 256
  %i = add i32 %bs, %tid
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %do, label %end
do:
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %i
  %pc = getelementptr float, ptr addrspace(1) %c, i32 %i
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %s = fadd float %x, %y
  store float %s, ptr addrspace(1) %pc
  br label %end
end:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
!0 = !{!"float*", !"float*", !"float*", !"int"}
