// The Kimi-K3 TP8 attention kernel meets kernel.md's budget per wave per 128-token block:
// 9 global_load_lds_dwordx4, 17 v_mfma_f32_16x16x128_f8f6f4, 16 ds_read_b64_tr_b8, and no
// vmcnt wait inside the block loop besides the planned one at its top (the DMA of block
// b+1 stays in flight while block b computes); no scratch, no spills, and the LDS plan of
// two 72 KiB K slots + P + the row exchange.
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1.mlir -o %t.q1.hsaco --dump-isa=%t.q1.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=DMA < %t.q1.s
// RUN: FileCheck %s --check-prefix=MFMA < %t.q1.s
// RUN: FileCheck %s --check-prefix=TR < %t.q1.s
// RUN: FileCheck %s --check-prefix=WAIT < %t.q1.s
// RUN: llvm-readelf --notes %t.q1.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q4.mlir -o %t.q4.hsaco --dump-isa=%t.q4.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=MFMA < %t.q4.s
// RUN: FileCheck %s --check-prefix=WAIT < %t.q4.s

// RES: kernel @mla_attn: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=153088 private_segment_fixed_size=0 wavefront_size=64 max_flat_workgroup_size=512
// RES: kernel @mla_combine: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=0 private_segment_fixed_size=0

// The prologue issues block 0's 9 DMAs; the loop issues the next block's 9.
// DMA-LABEL: mla_attn:
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: global_load_lds_dwordx4
// DMA: ; mla: block compute
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: global_load_lds_dwordx4
// DMA: ; mla: block loop exit
// DMA-NOT: global_load_lds_dwordx4
// DMA: s_endpgm

// MFMA-LABEL: mla_attn:
// MFMA-NOT: v_mfma
// MFMA: ; mla: block compute
// MFMA-COUNT-17: v_mfma_f32_16x16x128_f8f6f4
// MFMA-NOT: v_mfma
// MFMA: ; mla: block loop exit
// MFMA-NOT: v_mfma
// MFMA: s_endpgm

// TR-LABEL: mla_attn:
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: block compute
// TR-COUNT-16: ds_read_b64_tr_b8
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: block loop exit

// The top of the loop waits for this wave's DMAs of the block, then the barrier; after
// it, nothing in the loop waits on vector memory.
// WAIT-LABEL: mla_attn:
// WAIT: s_waitcnt vmcnt(0) lgkmcnt(0)
// WAIT-NEXT: ;;#ASMSTART
// WAIT-NEXT: ;;#ASMEND
// WAIT-NEXT: s_barrier
// WAIT: ; mla: block compute
// WAIT-NOT: vmcnt
// WAIT: ; mla: block loop exit

// NOTES: .group_segment_fixed_size: 153088
// NOTES: .name: mla_attn
// NOTES: .private_segment_fixed_size: 0
// NOTES: .sgpr_spill_count: 0
// NOTES: .vgpr_spill_count: 0
