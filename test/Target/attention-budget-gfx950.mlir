// The Kimi-K3 TP8 attention kernel meets the per-block budget (docs/kernel-contract.md):
// per 128-token block and wave (one 16-row tile, 8 waves), 9 global_load_lds_dwordx4
// (the next block's K), 17 v_mfma_f32_16x16x128_f8f6f4 (9 QK + 8 PV) and 16
// ds_read_b64_tr_b8; no scratch, no spills, and the LDS plan of two 72 KiB K slots + P +
// the row exchange. The loop runs two blocks an iteration, so the loop's code (from the
// "block loop" marker to the "last block" marker, whatever order the backend lays its
// basic blocks out in) holds twice the budget; an odd count's last block, after it, once
// (without DMAs: there is no next block). The prologue issues block 0's 9 DMAs.
//
// The schedule (mla-pipeline-blocks): each block opens with the barrier that frees the
// other slot, loads the page indices of the block two ahead (global_load_dword), issues
// the next block's first 3 DMAs and only then waits for its own DMAs, with those and
// the index load still in flight (vmcnt(4)); nothing in the loop waits for vector
// memory to drain (no vmcnt(0)). The next block's other 6 DMAs go out before the row
// max goes to LDS, none between the softmax's barriers and the next block's wait.
// Q is split once per CTA, after block 0's DMAs are issued: each thread's share of a row
// (the row max over its 32 threads by DPP and a lane swap, no LDS instruction), written
// to the Q exchange, one barrier, then the operand reads (18 ds_read_b128 + k).
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1.mlir -o %t.q1.hsaco --dump-isa=%t.q1.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=DMA < %t.q1.s
// RUN: FileCheck %s --check-prefix=MFMA < %t.q1.s
// RUN: FileCheck %s --check-prefix=TR < %t.q1.s
// RUN: FileCheck %s --check-prefix=WAIT < %t.q1.s
// RUN: FileCheck %s --check-prefix=SCHED < %t.q1.s
// RUN: FileCheck %s --check-prefix=QSPLIT < %t.q1.s
// RUN: FileCheck %s --check-prefix=QKREAD < %t.q1.s
// RUN: FileCheck %s --check-prefix=DMASRC < %t.q1.s
// RUN: llvm-readelf --notes %t.q1.hsaco | FileCheck %s --check-prefix=NOTES
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q4.mlir -o %t.q4.hsaco --dump-isa=%t.q4.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=DMA < %t.q4.s
// RUN: FileCheck %s --check-prefix=MFMA < %t.q4.s
// RUN: FileCheck %s --check-prefix=TR < %t.q4.s
// RUN: FileCheck %s --check-prefix=WAIT < %t.q4.s
// RUN: FileCheck %s --check-prefix=SCHED < %t.q4.s
// RUN: FileCheck %s --check-prefix=QSPLIT < %t.q4.s
// RUN: FileCheck %s --check-prefix=QKREAD < %t.q4.s
// RUN: FileCheck %s --check-prefix=DMASRC < %t.q4.s

// The LDS: the layout's 153088 bytes and the device schedule's 24 (the unit's entry and
// its request's tokens).
// RES: kernel @mla_attn: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=153112 private_segment_fixed_size=0 wavefront_size=64 max_flat_workgroup_size=512
// RES: kernel @mla_combine: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=0 private_segment_fixed_size=0

// DMA-LABEL: mla_attn:
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: global_load_lds_dwordx4
// DMA: ; mla: block loop
// DMA-COUNT-18: global_load_lds_dwordx4
// DMA-NOT: global_load_lds_dwordx4
// DMA: ; mla: last block
// DMA-NOT: global_load_lds_dwordx4
// DMA: s_endpgm

// MFMA-LABEL: mla_attn:
// MFMA-NOT: v_mfma
// MFMA: ; mla: block loop
// MFMA-COUNT-34: v_mfma_f32_16x16x128_f8f6f4
// MFMA-NOT: v_mfma
// MFMA: ; mla: last block
// MFMA-COUNT-17: v_mfma_f32_16x16x128_f8f6f4
// MFMA-NOT: v_mfma
// MFMA: ; mla: block loop exit
// MFMA-NOT: v_mfma
// MFMA: s_endpgm

// TR-LABEL: mla_attn:
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: block loop
// TR-COUNT-32: ds_read_b64_tr_b8
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: last block
// TR-COUNT-16: ds_read_b64_tr_b8
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: block loop exit
// TR-NOT: ds_read_b64_tr_b8
// TR: s_endpgm

// The prologue issues block 0's DMAs after the indices of blocks 0 and 1, each DMA
// leaving the earlier ones in flight (no vmcnt below 7 after the first DMA). In the
// loop each block waits for the next block's indices (vmcnt(10): block b's 9 DMAs and
// the index load just issued stay in flight), issues the next block's first 3 DMAs and
// then waits for its own DMAs with those 3 and the index load in flight (vmcnt(4);
// vmcnt(1) on the branch without a next block). No vmcnt(0) in the loop; the last
// block drains, and after it one vmcnt(0) covers the last index load.
// WAIT-LABEL: mla_attn:
// WAIT: global_load_lds_dwordx4
// WAIT-NOT: vmcnt({{[0-6]}})
// WAIT: ; mla: block loop
// WAIT-NOT: vmcnt
// WAIT: global_load_dword v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], off
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(10)
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(1)
// WAIT-NOT: vmcnt
// WAIT-COUNT-3: global_load_lds_dwordx4
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(4)
// WAIT-NOT: vmcnt
// WAIT: global_load_dword v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], off
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(10)
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(1)
// WAIT-NOT: vmcnt
// WAIT-COUNT-3: global_load_lds_dwordx4
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(4)
// WAIT-NOT: vmcnt
// WAIT: ; mla: last block
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(0)
// WAIT-NOT: vmcnt
// WAIT: ; mla: block compute
// WAIT-NOT: vmcnt
// WAIT: s_waitcnt vmcnt(0)
// WAIT-NOT: vmcnt
// WAIT: ; mla: block loop exit

// Each block's 9 DMA source pages are fetched across lanes at once before the first DMA
// (mla.kv_dma_pages): two DPP row_newbcast moves for each of the 8 latent DMAs, no LDS
// permute, so no lgkmcnt wait before the DMAs (its count would depend on the LDS-DMA
// counter question).
// DMASRC-LABEL: mla_attn:
// DMASRC: ; mla: block loop
// DMASRC-NOT: {{ds_bpermute_b32|row_newbcast}}
// DMASRC: s_waitcnt vmcnt(10)
// DMASRC-NEXT: v_mov_b32_dpp {{v[0-9]+}}, [[IDX:v[0-9]+]] row_newbcast:0 row_mask:0x3 bank_mask:0xf
// DMASRC-COUNT-7: v_mov_b32_dpp {{v[0-9]+}}, [[IDX]] row_newbcast:{{[0-9]+}} row_mask:0x3 bank_mask:0xf
// DMASRC-COUNT-8: v_mov_b32_dpp {{v[0-9]+}}, [[IDX]] row_newbcast:{{[0-9]+}} row_mask:0xc bank_mask:0xf
// DMASRC-NOT: {{ds_bpermute_b32|lgkmcnt|row_newbcast}}
// DMASRC-COUNT-3: global_load_lds_dwordx4
// DMASRC-NOT: {{ds_bpermute_b32|row_newbcast}}
// DMASRC: s_waitcnt vmcnt(10)
// DMASRC-NEXT: v_mov_b32_dpp {{v[0-9]+}}, [[IDX2:v[0-9]+]] row_newbcast:0 row_mask:0x3 bank_mask:0xf
// DMASRC-COUNT-7: v_mov_b32_dpp {{v[0-9]+}}, [[IDX2]] row_newbcast:{{[0-9]+}} row_mask:0x3 bank_mask:0xf
// DMASRC-COUNT-8: v_mov_b32_dpp {{v[0-9]+}}, [[IDX2]] row_newbcast:{{[0-9]+}} row_mask:0xc bank_mask:0xf
// DMASRC-NOT: {{ds_bpermute_b32|lgkmcnt|row_newbcast}}
// DMASRC-COUNT-3: global_load_lds_dwordx4
// DMASRC-NOT: {{ds_bpermute_b32|row_newbcast}}
// DMASRC: ; mla: last block

// QK reads K one step ahead of its MFMAs (the scheduling groups of mla-lower-tile-ops):
// after the wait for the block's own DMAs, the first two steps' operands (4
// ds_read_b128) are read before the block's first MFMA, and the waits before the MFMAs
// leave reads in flight.
// QKREAD-LABEL: mla_attn:
// QKREAD: ; mla: block loop
// QKREAD: s_waitcnt vmcnt(4)
// QKREAD-NOT: v_mfma
// QKREAD: ; mla: block compute
// QKREAD-NOT: v_mfma
// QKREAD-COUNT-4: ds_read_b128
// QKREAD-NOT: ds_read
// QKREAD: s_waitcnt lgkmcnt(2)
// QKREAD-NEXT: v_mfma_f32_16x16x128_f8f6f4

// Where the next block's DMAs go, for both blocks of the loop. The backend lays the
// second block's softmax and PV out first (the loop is rotated; its two barriers come
// first, no DMA there). Then the barrier that frees the other slot, with no LDS access
// or DMA between it and the index load and wait; 3 DMAs before the wait for the
// block's own DMAs (and no barrier after that wait), 6 more after QK before the row max
// goes to LDS, none between the softmax's barriers.
// SCHED-LABEL: mla_attn:
// SCHED: ; mla: block loop
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|vmcnt}}
// SCHED: global_load_dword v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], off
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|s_barrier}}
// SCHED: s_waitcnt vmcnt(10)
// SCHED-NOT: {{global_load_lds_dwordx4|s_barrier}}
// SCHED-COUNT-3: global_load_lds_dwordx4
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|s_barrier}}
// SCHED: s_waitcnt vmcnt(4)
// SCHED-NOT: {{global_load_lds_dwordx4|s_barrier}}
// SCHED: ; mla: block compute
// SCHED-NOT: {{s_barrier|ds_write}}
// SCHED-COUNT-6: global_load_lds_dwordx4
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: ds_write_b32
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: s_barrier
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|vmcnt}}
// SCHED: global_load_dword v{{[0-9]+}}, v[{{[0-9]+:[0-9]+}}], off
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|s_barrier}}
// SCHED: s_waitcnt vmcnt(10)
// SCHED-NOT: {{global_load_lds_dwordx4|s_barrier}}
// SCHED-COUNT-3: global_load_lds_dwordx4
// SCHED-NOT: {{ds_|global_load_lds_dwordx4|s_barrier}}
// SCHED: s_waitcnt vmcnt(4)
// SCHED-NOT: {{global_load_lds_dwordx4|s_barrier}}
// SCHED: ; mla: block compute
// SCHED-NOT: {{s_barrier|ds_write}}
// SCHED-COUNT-6: global_load_lds_dwordx4
// SCHED-NOT: global_load_lds_dwordx4
// SCHED: ; mla: last block

// QSPLIT-LABEL: mla_attn:
// QSPLIT-NOT: row_mirror
// QSPLIT-COUNT-9: global_load_lds_dwordx4
// QSPLIT-NOT: {{ds_|s_barrier}}
// QSPLIT: v_mov_b32_dpp {{.*}} quad_perm:[1,0,3,2]
// QSPLIT-NOT: {{ds_|s_barrier}}
// QSPLIT: v_mov_b32_dpp {{.*}} row_mirror
// QSPLIT-NOT: {{ds_|s_barrier}}
// QSPLIT: v_permlane16_swap_b32
// QSPLIT-NOT: s_barrier
// QSPLIT: ds_write
// QSPLIT: s_barrier
// QSPLIT-COUNT-18: ds_read_b128
// QSPLIT: ; mla: block loop
// QSPLIT-NOT: row_mirror
// QSPLIT: s_endpgm

// NOTES: .group_segment_fixed_size: 153112
// NOTES: .name: mla_attn
// NOTES: .private_segment_fixed_size: 0
// NOTES: .sgpr_spill_count: 0
// NOTES: .vgpr_spill_count: 0
