; A kernel that never ends while p[0] != 12345 (a volatile load each iteration):
; the emulator's instruction limit or SIGINT must stop it.
define amdgpu_kernel void @spin(ptr addrspace(1) %p) {
entry:
  br label %loop
loop:
  %v = load volatile i32, ptr addrspace(1) %p
  %done = icmp eq i32 %v, 12345
  br i1 %done, label %end, label %loop
end:
  ret void
}
