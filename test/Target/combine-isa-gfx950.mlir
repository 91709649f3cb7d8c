// The combine kernel's instruction stream on gfx950 (issue 14): every partial load of
// a row is in flight at once. Its 64 global loads (32 slots x lse + 8 bf16 values) form
// one run with no s_waitcnt vmcnt and no scalar load between them, so no split waits
// for another (there is no split loop: the slots are unrolled); after the kernel
// arguments there is no scalar memory access at all (no scalar round trip per split);
// the weights use v_exp_f32 once per slot; the 8 split groups are summed with DPP; the
// output is scaled by one v_rcp_f32, with no division.
//
// The ISA is reduced to one line per instruction kind of interest and runs of equal
// lines are counted (uniq -c), so "64 global_load" is the unbroken run of loads.
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1.mlir -o %t.q1.hsaco --dump-isa=%t.q1.s
// RUN: sed -n '/^mla_combine:/,/s_endpgm/p' %t.q1.s \
// RUN:   | grep -E '^\s*(global_load|global_store|s_waitcnt|s_load|s_buffer_load|v_exp_f32|v_rcp_f32|v_div|s_endpgm|v_[a-z0-9_]+_dpp)' \
// RUN:   | sed -E -e 's/^\s*global_load_dword(x4)?\s.*/global_load/;t' \
// RUN:            -e 's/^\s*s_waitcnt.*vmcnt.*/s_waitcnt vmcnt/;t' \
// RUN:            -e 's/^\s*v_[a-z0-9_]+_dpp\s.*/dpp/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q4.mlir -o %t.q4.hsaco --dump-isa=%t.q4.s
// RUN: sed -n '/^mla_combine:/,/s_endpgm/p' %t.q4.s \
// RUN:   | grep -E '^\s*(global_load|global_store|s_waitcnt|s_load|s_buffer_load|v_exp_f32|v_rcp_f32|v_div|s_endpgm|v_[a-z0-9_]+_dpp)' \
// RUN:   | sed -E -e 's/^\s*global_load_dword(x4)?\s.*/global_load/;t' \
// RUN:            -e 's/^\s*s_waitcnt.*vmcnt.*/s_waitcnt vmcnt/;t' \
// RUN:            -e 's/^\s*v_[a-z0-9_]+_dpp\s.*/dpp/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s

// The kernel arguments, then the row's loads in one run.
// CHECK: s_load
// CHECK-NOT: global_load
// CHECK: {{^ *}}64 global_load{{$}}
// Nothing more is loaded, from global or scalar memory.
// CHECK-NOT: {{global_load|s_load|s_buffer_load}}
// CHECK: s_waitcnt vmcnt
// 1. the max over the split groups (3 DPP steps); 2. one 2^x per slot.
// CHECK: {{^ *}}3 dpp{{$}}
// CHECK-NOT: {{global_load|s_load|s_buffer_load}}
// CHECK: {{^ *}}1 v_exp_f32
// CHECK-NOT: {{global_load|s_load|s_buffer_load}}
// CHECK: {{^ *}}31 v_exp_f32
// 3. W and the 8 columns over the split groups; 4. one reciprocal, no division.
// CHECK-NOT: {{global_load|s_load|s_buffer_load}}
// CHECK: {{^ *}}27 dpp{{$}}
// CHECK-NOT: {{v_div|dpp}}
// CHECK: {{^ *}}1 v_rcp_f32
// CHECK-NOT: {{v_div|v_rcp|global_load|s_load}}
// CHECK: global_store
// CHECK: s_endpgm
