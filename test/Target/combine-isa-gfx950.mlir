// The combine kernel's instruction stream on gfx950 (issue 14): every partial load of
// a row is in flight at once. The kernel has four layouts (P = 1, 8, 16, 64 split
// groups, holding NS <= 8, <= 64, <= 128, <= 256, docs/combine-kernel.md) and five
// variants: the 64-group layout twice (for NS > 128, 8 loads, first in the code
// object; and on 8 < NS <= 128, taken by a launch of few (row, head) pairs, 2 slots, 4
// loads); in each, the global loads of all its slots (lse + 8 bf16 values; 16 loads
// in the other layouts) form one run (in LLVM's block order, which puts two 16-load
// runs one after the other, between them only the first one's wait; the last variant
// shares its tail, and its reciprocal, with another) with no s_waitcnt vmcnt and no scalar load between them, so no split
// waits for another (there is no split loop: the slots are unrolled); the kernel
// arguments come in one round trip (both scalar loads before the first wait); after
// them and, with the device schedule, the workgroup's merge entry (one s_load_dwordx4:
// request, slice, pieces, first) there is no scalar memory access at all (no scalar
// round trip per split); each variant scales its output by one v_rcp_f32, and nothing
// divides.
//
// The ISA is reduced to one line per instruction kind of interest and runs of equal
// lines are counted (uniq -c), so "32 global_load" is an unbroken run of 32 loads.
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1.mlir -o %t.q1.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_combine:/,/s_endpgm/p' \
// RUN:   | grep -E '^\s*(global_load|global_store|s_waitcnt|s_load|s_buffer_load|v_rcp_f32|v_div|s_endpgm)' \
// RUN:   | sed -E -e 's/^\s*global_load_dword(x4)?\s.*/global_load/;t' \
// RUN:            -e 's/^\s*s_waitcnt.*vmcnt.*/s_waitcnt vmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q4.mlir -o %t.q4.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_combine:/,/s_endpgm/p' \
// RUN:   | grep -E '^\s*(global_load|global_store|s_waitcnt|s_load|s_buffer_load|v_rcp_f32|v_div|s_endpgm)' \
// RUN:   | sed -E -e 's/^\s*global_load_dword(x4)?\s.*/global_load/;t' \
// RUN:            -e 's/^\s*s_waitcnt.*vmcnt.*/s_waitcnt vmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s

// The kernel arguments (one round trip) and the merge entry first; then only the five
// runs of loads.
// CHECK: {{^ *}}1 s_load_dwordx8{{$}}
// CHECK-NEXT: {{^ *}}1 s_load_dwordx4{{$}}
// CHECK-NEXT: {{^ *}}1 s_waitcnt{{$}}
// CHECK-NEXT: {{^ *}}1 s_load_dwordx4{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}8 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div|v_rcp}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}4 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div}}
// CHECK: {{^ *}}16 global_load{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load|v_div|v_rcp}}
// CHECK: s_endpgm
