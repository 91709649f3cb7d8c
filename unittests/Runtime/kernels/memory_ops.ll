; Global atomics, buffer resources with a range, and flat (generic) pointers.
;  @atomics: every work-item adds 1 to out[0] and its id to out[1] (returning the old
;  values), takes umax into out[2] and adds 0.5f to out[3]; old values go to olds[i].
;  @buffer_ops: a raw buffer of `records` bytes over `in`: lanes read in[i] (0 past the
;  range) and write i+1000 to out (dropped past the range).
;  @flat_ops: generic pointers: a global load/store through flat, and LDS through flat.
@shared = internal addrspace(3) global [64 x i32] poison, align 4

define amdgpu_kernel void @atomics(ptr addrspace(1) %out, ptr addrspace(1) %olds) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %bid, 64
  %i = add i32 %b, %tid
  %p1 = getelementptr i32, ptr addrspace(1) %out, i32 1
  %p2 = getelementptr i32, ptr addrspace(1) %out, i32 2
  %p3 = getelementptr float, ptr addrspace(1) %out, i32 3
  %old0 = atomicrmw add ptr addrspace(1) %out, i32 1 seq_cst
  %old1 = atomicrmw add ptr addrspace(1) %p1, i32 %i seq_cst
  %m = mul i32 %i, 7
  %mm = urem i32 %m, 1000
  %old2 = atomicrmw umax ptr addrspace(1) %p2, i32 %mm seq_cst
  %old3 = atomicrmw fadd ptr addrspace(1) %p3, float 0.5 seq_cst
  %q = getelementptr i32, ptr addrspace(1) %olds, i32 %i
  store i32 %old0, ptr addrspace(1) %q
  ret void
}

define amdgpu_kernel void @buffer_ops(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %records) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %rec64 = zext i32 %records to i64
  %rin = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %in, i16 0, i64 %rec64, i32 159744)
  %rout = call ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1) %out, i16 0, i64 %rec64, i32 159744)
  %off = shl i32 %tid, 2
  %v = call i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8) %rin, i32 %off, i32 0, i32 0)
  %w = add i32 %tid, 1000
  call void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32 %w, ptr addrspace(8) %rout, i32 %off, i32 0, i32 0)
  %hi = getelementptr i32, ptr addrspace(1) %out, i32 64
  %q = getelementptr i32, ptr addrspace(1) %hi, i32 %tid
  store i32 %v, ptr addrspace(1) %q
  ret void
}

define amdgpu_kernel void @flat_ops(ptr addrspace(1) %in, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %gin = addrspacecast ptr addrspace(1) %in to ptr
  %gout = addrspacecast ptr addrspace(1) %out to ptr
  %pi = getelementptr i32, ptr %gin, i32 %tid
  %v = load volatile i32, ptr %pi
  %ls = getelementptr [64 x i32], ptr addrspace(3) @shared, i32 0, i32 %tid
  %lf = addrspacecast ptr addrspace(3) %ls to ptr
  %v2 = mul i32 %v, 3
  store volatile i32 %v2, ptr %lf
  call void @llvm.amdgcn.s.barrier()
  %rev = sub i32 63, %tid
  %lr = getelementptr [64 x i32], ptr addrspace(3) @shared, i32 0, i32 %rev
  %lrf = addrspacecast ptr addrspace(3) %lr to ptr
  %x = load volatile i32, ptr %lrf
  %po = getelementptr i32, ptr %gout, i32 %tid
  store volatile i32 %x, ptr %po
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare void @llvm.amdgcn.s.barrier()
declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc.p8.p1(ptr addrspace(1), i16, i64, i32)
declare i32 @llvm.amdgcn.raw.ptr.buffer.load.i32(ptr addrspace(8), i32, i32, i32)
declare void @llvm.amdgcn.raw.ptr.buffer.store.i32(i32, ptr addrspace(8), i32, i32, i32)

; Sub-dword global accesses: sign/zero-extending byte and short loads, byte and
; short stores: out[i] = sext(in8[i]) + zext(in8[i]) * 65536, out16[i] = in16[i]
; sign-extended, and bytes/shorts written back.
define amdgpu_kernel void @subdword(ptr addrspace(1) %in8, ptr addrspace(1) %in16, ptr addrspace(1) %out, ptr addrspace(1) %out8, ptr addrspace(1) %out16) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p8 = getelementptr i8, ptr addrspace(1) %in8, i32 %tid
  %b = load i8, ptr addrspace(1) %p8
  %bs = sext i8 %b to i32
  %bz = zext i8 %b to i32
  %bzs = shl i32 %bz, 16
  %r0 = add i32 %bs, %bzs
  %p16 = getelementptr i16, ptr addrspace(1) %in16, i32 %tid
  %h = load i16, ptr addrspace(1) %p16
  %hs = sext i16 %h to i32
  %q0 = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %r0, ptr addrspace(1) %q0
  %q1 = getelementptr i32, ptr addrspace(1) %q0, i32 64
  store i32 %hs, ptr addrspace(1) %q1
  %b2 = add i8 %b, 1
  %o8 = getelementptr i8, ptr addrspace(1) %out8, i32 %tid
  store i8 %b2, ptr addrspace(1) %o8
  %h2 = mul i16 %h, 3
  %o16 = getelementptr i16, ptr addrspace(1) %out16, i32 %tid
  store i16 %h2, ptr addrspace(1) %o16
  ret void
}

; Sign-extending loads alone (llc selects global_load_sbyte / global_load_sshort).
define amdgpu_kernel void @sext_loads(ptr addrspace(1) %in8, ptr addrspace(1) %in16, ptr addrspace(1) %out) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %p8 = getelementptr i8, ptr addrspace(1) %in8, i32 %tid
  %b = load i8, ptr addrspace(1) %p8
  %bs = sext i8 %b to i32
  %p16 = getelementptr i16, ptr addrspace(1) %in16, i32 %tid
  %h = load i16, ptr addrspace(1) %p16
  %hs = sext i16 %h to i32
  %q0 = getelementptr i32, ptr addrspace(1) %out, i32 %tid
  store i32 %bs, ptr addrspace(1) %q0
  %q1 = getelementptr i32, ptr addrspace(1) %q0, i32 64
  store i32 %hs, ptr addrspace(1) %q1
  ret void
}
