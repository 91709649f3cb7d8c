; out[i] = in[i] + 1 for one wave: the smallest kernel with a load whose result is used.
; The "nowait" build deletes the first `s_waitcnt vmcnt(0)` from llc's assembly, so the
; add reads the load's destination before it is written: a register hazard.
target triple = "amdgcn-amd-amdhsa"

declare i32 @llvm.amdgcn.workitem.id.x()

define amdgpu_kernel void @load_add(ptr addrspace(1) noalias %in, ptr addrspace(1) noalias %out) #0 {
entry:
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %i = zext i32 %lane to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %in, i64 %i
  %x = load i32, ptr addrspace(1) %p, align 4
  %y = add i32 %x, 1
  %q = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %i
  store i32 %y, ptr addrspace(1) %q, align 4
  ret void
}

attributes #0 = { "amdgpu-flat-work-group-size"="64,64" "target-cpu"="gfx950" }
