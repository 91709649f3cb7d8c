// Instruction selection on gfx950, checked on the disassembly of the code
// object: the LDS DMA becomes global_load_lds_dwordx4 (one per
// rocdl.global.load.lds, immediate offsets folded), the transpose reads
// ds_read_b64_tr_b8, and rocdl.mfma.scale.f32.16x16x128.f8f6f4 with constant
// zero scales the *unscaled* v_mfma_f32_16x16x128_f8f6f4 (no ld_scale word).
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.hsaco --dump-isa=%t.s \
// RUN:   | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: llvm-objdump -d --mcpu=gfx950 %t.hsaco | FileCheck %s
// The --dump-isa text is the assembly of the same code.
// RUN: FileCheck %s --check-prefix=ASM < %t.s

// QUIET-NOT: {{.}}

// CHECK-LABEL: <tile_mfma>:
// CHECK-NOT: scratch_
// CHECK-NOT: buffer_store
// CHECK: global_load_lds_dwordx4 {{.*}}
// CHECK-NEXT: global_load_lds_dwordx4 {{.*}} offset:1024
// CHECK-NEXT: global_load_lds_dwordx4 {{.*}} offset:2048
// CHECK-NEXT: global_load_lds_dwordx4 {{.*}} offset:3072
// CHECK-NOT: global_load_lds
// The first transpose read waits for the DMA (vmcnt).
// CHECK: s_waitcnt vmcnt(0)
// CHECK-COUNT-8: ds_read_b64_tr_b8 v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}
// CHECK-NOT: ds_read
// CHECK: s_waitcnt lgkmcnt(0)
// CHECK-NOT: v_mfma_ld_scale
// CHECK-COUNT-2: v_mfma_f32_16x16x128_f8f6f4 v[0:3]
// CHECK-NOT: v_mfma
// CHECK: global_store_dwordx4
// CHECK: s_endpgm

// ASM: .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
// ASM: .amdhsa_code_object_version 5
// ASM-LABEL: tile_mfma:
// ASM-COUNT-4: global_load_lds_dwordx4
// ASM-COUNT-8: ds_read_b64_tr_b8
// ASM-COUNT-2: v_mfma_f32_16x16x128_f8f6f4
// ASM: .amdhsa_group_segment_fixed_size 4096
// ASM: .amdhsa_private_segment_fixed_size 0
