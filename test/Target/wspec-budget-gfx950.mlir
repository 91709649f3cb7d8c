// The warp-specialised Kimi-K3 TP8 attention kernel (F15, docs/warp-specialization.md)
// meets its per-role budget per 128-token block: a compute role wave 18
// v_mfma_f32_16x16x128_f8f6f4 for S of its two tiles, then 32 ds_read_b64_tr_b8 and 16
// MFMAs for O of its 8 latent tiles, and no DMA; a DMA role wave 2 x 9
// global_load_lds_dwordx4 (its two tiles of the next block) and no LDS instruction
// and no lgkmcnt wait at all, so its DMAs never hold up a barrier or an LDS read under
// either answer to the LDS-DMA counter question. No scratch, no spills; LDS 153,088 B
// (the plain layout), within gfx950's 160 KiB. The markers come from
// mla-warp-specialize; the backend rotates both role loops (the compute loop opens
// with the accumulate part, the DMA loop after barrier K). The DMA role's sections
// (the bytes-bound plan of 1 and 2 head groups): block 0's two tiles before the loop
// (9 + 9; the compute role splits every wave's share of Q meanwhile) and, after
// barrier A of block 0, block 1's first tile (9); in the loop the next block's second
// tile after barrier K and, after barrier A (before the compute role's PV MFMAs), the
// first tile of the block after it (9 + 9). The DMA role runs at s_setprio 3 until
// its loop, at 0 in it; the compute role never sets it.
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1_wspec.mlir -o %t.hsaco --dump-isa=%t.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=MFMA < %t.s
// RUN: FileCheck %s --check-prefix=TR < %t.s
// RUN: FileCheck %s --check-prefix=DMA < %t.s
// RUN: FileCheck %s --check-prefix=PRIO < %t.s

// The LDS: the layout's 153088 bytes and the device schedule's 24 (the unit's entry and
// its request's tokens).
// RES: kernel @mla_attn: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=153112 private_segment_fixed_size=0 wavefront_size=64 max_flat_workgroup_size=512

// MFMA-LABEL: mla_attn:
// MFMA: ; mla: compute role accumulate
// MFMA-COUNT-16: v_mfma_f32_16x16x128_f8f6f4
// MFMA-NOT: v_mfma
// MFMA: ; mla: compute role block
// MFMA-COUNT-18: v_mfma_f32_16x16x128_f8f6f4
// MFMA-NOT: v_mfma
// MFMA: ; mla: compute role end

// TR-LABEL: mla_attn:
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: compute role accumulate
// TR-COUNT-32: ds_read_b64_tr_b8
// TR-NOT: ds_read_b64_tr_b8
// TR: ; mla: compute role block
// TR-NOT: ds_read_b64_tr_b8
// TR: s_endpgm

// DMA-LABEL: mla_attn:
// DMA-NOT: global_load_lds
// DMA: ; mla: compute role end
// DMA-NOT: global_load_lds
// DMA: ; mla: dma role tile
// DMA-NOT: {{ds_|lgkmcnt}}
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role tile
// DMA-NOT: {{ds_|lgkmcnt}}
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role tile
// DMA-NOT: {{ds_|lgkmcnt}}
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role loop
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role tile
// DMA-NOT: {{ds_|lgkmcnt}}
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role tile
// DMA-NOT: {{ds_|lgkmcnt}}
// DMA-COUNT-9: global_load_lds_dwordx4
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: ; mla: dma role end
// DMA-NOT: {{global_load_lds|ds_|lgkmcnt}}
// DMA: s_endpgm

// PRIO-LABEL: mla_attn:
// PRIO-NOT: s_setprio
// The DMA waves (threads 256..511) raise theirs before the device schedule's barrier.
// PRIO: s_cmpk_lt_u32 s{{[0-9]+}}, 0x100
// PRIO-NEXT: s_cbranch_scc1
// PRIO-NEXT: s_setprio 3
// PRIO-NOT: s_setprio
// PRIO: s_barrier
// PRIO-NOT: s_setprio
// PRIO: ; mla: compute role end
// PRIO-NOT: {{s_setprio|global_load_lds}}
// PRIO: s_setprio 3
// PRIO-NOT: s_setprio
// PRIO: ; mla: dma role tile
// PRIO-NOT: s_setprio
// PRIO: ; mla: dma role tile
// PRIO-NOT: s_setprio
// PRIO: ; mla: dma role tile
// PRIO-NOT: s_setprio
// PRIO: s_setprio 0
// PRIO-NOT: {{s_setprio|global_load_lds}}
// PRIO: ; mla: dma role loop
// PRIO-NOT: s_setprio
// PRIO: s_endpgm
