; Wave reductions over 64 lanes (one wave per workgroup):
;  @dpp_sum: integer sum with DPP row_shr 1,2,4,8 + row_bcast 15/31, result from lane 63;
;  @swizzle_bpermute: lane l gets in[l ^ 1] via ds_swizzle and in[63 - l] via ds_bpermute.
define amdgpu_kernel void @dpp_sum(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %base = mul i32 %bid, 64
  %i = add i32 %base, %tid
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %i
  %x0 = load i32, ptr addrspace(1) %p
  %d1 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x0, i32 273, i32 15, i32 15, i1 true)
  %x1 = add i32 %x0, %d1
  %d2 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x1, i32 274, i32 15, i32 15, i1 true)
  %x2 = add i32 %x1, %d2
  %d3 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x2, i32 276, i32 15, i32 15, i1 true)
  %x3 = add i32 %x2, %d3
  %d4 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x3, i32 280, i32 15, i32 15, i1 true)
  %x4 = add i32 %x3, %d4
  %d5 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x4, i32 322, i32 10, i32 15, i1 false)
  %x5 = add i32 %x4, %d5
  %d6 = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x5, i32 323, i32 12, i32 15, i1 false)
  %x6 = add i32 %x5, %d6
  %s = call i32 @llvm.amdgcn.readlane.i32(i32 %x6, i32 63)
  %q = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %x6, ptr addrspace(1) %q
  %is0 = icmp eq i32 %tid, 0
  br i1 %is0, label %w, label %e
w:
  %tot = getelementptr i32, ptr addrspace(1) %out, i32 %bid
  %tot2 = getelementptr i32, ptr addrspace(1) %tot, i32 4096
  store i32 %s, ptr addrspace(1) %tot2
  br label %e
e:
  ret void
}

define amdgpu_kernel void @swizzle_bpermute(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %tid
  %x = load i32, ptr addrspace(1) %p
  ; swizzle bit-mask mode: and=0x1f, or=0, xor=1 -> offset = 0x1f | (1 << 10)
  %sw = call i32 @llvm.amdgcn.ds.swizzle(i32 %x, i32 1055)
  %rev = sub i32 63, %tid
  %addr = shl i32 %rev, 2
  %bp = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %x)
  %q0 = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %sw, ptr addrspace(1) %q0
  %q1 = getelementptr i32, ptr addrspace(1) %q0, i32 64
  store i32 %bp, ptr addrspace(1) %q1
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
declare i32 @llvm.amdgcn.ds.swizzle(i32, i32)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
