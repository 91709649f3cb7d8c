// The warp-specialised Kimi-K3 TP8 attention kernel (F15, docs/warp-specialization.md)
// meets its per-role budget per 128-token block: a QK role wave 18
// v_mfma_f32_16x16x128_f8f6f4 (S of its two tiles) and no DMA or transposing read; a
// PV role wave 18 global_load_lds_dwordx4 (its two tiles of the next block), 32
// ds_read_b64_tr_b8 (V^T of its 8 latent tiles) and 16 MFMAs (8 latent tiles x P hi,
// lo). No scratch, no spills; LDS 153,152 B (the plain layout + the 64-byte hand-over
// row max), within gfx950's 160 KiB. The markers come from mla-warp-specialize; the
// backend lays out the PV role's DMA three times: block 0 before the steps, step 0
// (peeled) and the loop's step.
// RUN: mla-compile %mla_src_root/examples/kimi_k3_tp8_q1_wspec.mlir -o %t.hsaco --dump-isa=%t.s --print-kernel-resources | FileCheck %s --check-prefix=RES
// RUN: FileCheck %s --check-prefix=QK < %t.s
// RUN: FileCheck %s --check-prefix=DMA < %t.s
// RUN: FileCheck %s --check-prefix=PV < %t.s

// RES: kernel @mla_attn: {{.*}} sgpr_spill_count=0 vgpr_spill_count=0 group_segment_fixed_size=153152 private_segment_fixed_size=0 wavefront_size=64 max_flat_workgroup_size=512

// QK-LABEL: mla_attn:
// QK-NOT: {{v_mfma|global_load_lds|ds_read_b64_tr}}
// QK: ; mla: qk role block
// QK-COUNT-18: v_mfma_f32_16x16x128_f8f6f4
// QK-NOT: {{v_mfma|global_load_lds|ds_read_b64_tr}}
// QK: ; mla: qk role end

// DMA-LABEL: mla_attn:
// DMA-NOT: global_load_lds
// DMA: ; mla: qk role end
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role dma
// DMA-COUNT-18: global_load_lds_dwordx4
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role dma
// DMA-COUNT-18: global_load_lds_dwordx4
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role accumulate
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role block
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role dma
// DMA-COUNT-18: global_load_lds_dwordx4
// DMA-NOT: global_load_lds
// DMA: ; mla: pv role end
// DMA-NOT: global_load_lds
// DMA: s_endpgm

// The PV role's step (rotated by the backend: the MFMAs of block s - 1 open the loop):
// its 16 MFMAs, then its own DMAs waited for with the two index loads issued after them
// still in flight (vmcnt(2)) and barrier A, the 32 transposing reads, barrier B.
// PV-LABEL: mla_attn:
// PV: ; mla: qk role end
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: ; mla: pv role accumulate
// PV-COUNT-16: v_mfma_f32_16x16x128_f8f6f4
// PV-NOT: {{v_mfma|ds_read_b64_tr|vmcnt}}
// PV: s_waitcnt vmcnt(2) lgkmcnt(0)
// PV-NEXT: ;;#ASMSTART
// PV-NEXT: ;;#ASMEND
// PV-NEXT: s_barrier
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: ; mla: pv role block
// PV-COUNT-32: ds_read_b64_tr_b8
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: s_barrier
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: ; mla: pv role dma
// PV-COUNT-18: global_load_lds_dwordx4
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: ; mla: pv role end
// PV-NOT: {{v_mfma|ds_read_b64_tr}}
// PV: s_endpgm
