// The attention kernel reads its arguments in one scalar round trip: every s_load of
// the kernel arguments is issued before the first wait for them, and none follows it
// before the first global load (mla-outline-kernels reads every pointer argument in
// the entry block; otherwise LLVM sinks the loads of the arguments only a branch uses
// into that branch, a second round trip of about 220 modeled cycles before the
// workgroup's first global load). Checked on the plain and the warp-specialised build
// and on 1 and 3 head groups.
//
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1.mlir -o %t.q1.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_attn:/,/global_load/p' \
// RUN:   | grep -E '^\s*(global_load|s_waitcnt|s_load|s_buffer_load)' \
// RUN:   | sed -E -e 's/^\s*s_waitcnt.*lgkmcnt.*/s_waitcnt lgkmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1_wspec.mlir -o %t.q1w.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_attn:/,/global_load/p' \
// RUN:   | grep -E '^\s*(global_load|s_waitcnt|s_load|s_buffer_load)' \
// RUN:   | sed -E -e 's/^\s*s_waitcnt.*lgkmcnt.*/s_waitcnt lgkmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q4.mlir -o %t.q4.hsaco --dump-isa \
// RUN:   | sed -n '/^mla_attn:/,/global_load/p' \
// RUN:   | grep -E '^\s*(global_load|s_waitcnt|s_load|s_buffer_load)' \
// RUN:   | sed -E -e 's/^\s*s_waitcnt.*lgkmcnt.*/s_waitcnt lgkmcnt/;t' \
// RUN:            -e 's/^\s*([a-z_0-9]+).*/\1/' \
// RUN:   | uniq -c | FileCheck %s

// CHECK-NOT: s_waitcnt
// CHECK: s_load_dwordx
// CHECK-NEXT: s_load_dwordx
// CHECK-NEXT: s_load_dwordx
// CHECK-NOT: s_waitcnt
// CHECK: {{^ *}}1 s_waitcnt lgkmcnt{{$}}
// CHECK-NEXT: global_load
