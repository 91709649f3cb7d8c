; Row softmax with exp2: one 64-lane workgroup per row of 256 floats, 4 per lane.
; max and sum are reduced with ds_bpermute butterflies; out = exp2((x-max)*log2e)/sum.
define amdgpu_kernel void @softmax(ptr addrspace(1) %in, ptr addrspace(1) %out) {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %row = call i32 @llvm.amdgcn.workgroup.id.x()
  %rowbase = mul i32 %row, 256
  %base = add i32 %rowbase, %tid
  %p0 = getelementptr float, ptr addrspace(1) %in, i32 %base
  %p1 = getelementptr float, ptr addrspace(1) %p0, i32 64
  %p2 = getelementptr float, ptr addrspace(1) %p0, i32 128
  %p3 = getelementptr float, ptr addrspace(1) %p0, i32 192
  %a = load float, ptr addrspace(1) %p0
  %b = load float, ptr addrspace(1) %p1
  %c = load float, ptr addrspace(1) %p2
  %d = load float, ptr addrspace(1) %p3
  %m0 = call float @llvm.maxnum.f32(float %a, float %b)
  %m1 = call float @llvm.maxnum.f32(float %c, float %d)
  %m = call float @llvm.maxnum.f32(float %m0, float %m1)
  br label %maxloop
maxloop:
  %s = phi i32 [ 32, %entry ], [ %sn, %maxloop ]
  %mv = phi float [ %m, %entry ], [ %mn, %maxloop ]
  %partner = xor i32 %tid, %s
  %addr = shl i32 %partner, 2
  %mi = bitcast float %mv to i32
  %oi = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %mi)
  %of = bitcast i32 %oi to float
  %mn = call float @llvm.maxnum.f32(float %mv, float %of)
  %sn = lshr i32 %s, 1
  %more = icmp ne i32 %sn, 0
  br i1 %more, label %maxloop, label %exps
exps:
  %l2e = fmul float 0x3FF7154760000000, 1.0
  %ma = fsub float %a, %mn
  %mb = fsub float %b, %mn
  %mc = fsub float %c, %mn
  %md = fsub float %d, %mn
  %sa = fmul float %ma, %l2e
  %sb = fmul float %mb, %l2e
  %sc = fmul float %mc, %l2e
  %sd = fmul float %md, %l2e
  %ea = call float @llvm.amdgcn.exp2.f32(float %sa)
  %eb = call float @llvm.amdgcn.exp2.f32(float %sb)
  %ec = call float @llvm.amdgcn.exp2.f32(float %sc)
  %ed = call float @llvm.amdgcn.exp2.f32(float %sd)
  %t0 = fadd float %ea, %eb
  %t1 = fadd float %ec, %ed
  %t = fadd float %t0, %t1
  br label %sumloop
sumloop:
  %s2 = phi i32 [ 32, %exps ], [ %s2n, %sumloop ]
  %sv = phi float [ %t, %exps ], [ %svn, %sumloop ]
  %partner2 = xor i32 %tid, %s2
  %addr2 = shl i32 %partner2, 2
  %si = bitcast float %sv to i32
  %soi = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr2, i32 %si)
  %sof = bitcast i32 %soi to float
  %svn = fadd float %sv, %sof
  %s2n = lshr i32 %s2, 1
  %more2 = icmp ne i32 %s2n, 0
  br i1 %more2, label %sumloop, label %done
done:
  %ra = fdiv float %ea, %svn
  %rb = fdiv float %eb, %svn
  %rc = fdiv float %ec, %svn
  %rd = fdiv float %ed, %svn
  %q0 = getelementptr float, ptr addrspace(1) %out, i32 %base
  %q1 = getelementptr float, ptr addrspace(1) %q0, i32 64
  %q2 = getelementptr float, ptr addrspace(1) %q0, i32 128
  %q3 = getelementptr float, ptr addrspace(1) %q0, i32 192
  store float %ra, ptr addrspace(1) %q0
  store float %rb, ptr addrspace(1) %q1
  store float %rc, ptr addrspace(1) %q2
  store float %rd, ptr addrspace(1) %q3
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.amdgcn.exp2.f32(float)
