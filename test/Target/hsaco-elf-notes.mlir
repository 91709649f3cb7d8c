// The code object mla-compile writes for a hand-written gfx950 kernel
// (Inputs/gfx950-tile-kernel.mlir): an AMDGPU shared object for gfx950, code
// object version 5, whose amdhsa.kernels note gives the kernel's LDS (the
// 4 KiB workgroup buffer), no scratch and no spills.
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.hsaco --print-kernel-resources \
// RUN:   | FileCheck %s --check-prefix=RES
// RUN: llvm-readelf -h --notes %t.hsaco | FileCheck %s

// RES: kernel @tile_mfma:
// RES-SAME: sgpr_spill_count=0 vgpr_spill_count=0
// RES-SAME: group_segment_fixed_size=4096 private_segment_fixed_size=0
// RES-SAME: wavefront_size=64 max_flat_workgroup_size=64

// CHECK: OS/ABI: AMDGPU - HSA
// Code object version 5 is ELF ABI version 3.
// CHECK: ABI Version: 3
// CHECK: Type: DYN (Shared object file)
// CHECK: Machine: EM_AMDGPU
// CHECK: Flags: {{.*}}gfx950
// CHECK: NT_AMDGPU_METADATA
// CHECK: amdhsa.kernels:
// CHECK: .group_segment_fixed_size: 4096
// CHECK: .name: tile_mfma
// CHECK: .private_segment_fixed_size: 0
// CHECK: .reqd_workgroup_size:
// CHECK: .sgpr_spill_count: 0
// CHECK: .symbol: tile_mfma.kd
// CHECK: .vgpr_spill_count: 0
// CHECK: .wavefront_size: 64
// CHECK: amdhsa.target: amdgcn-amd-amdhsa--gfx950
// CHECK: amdhsa.version:
// CHECK-NEXT: - 1
// CHECK-NEXT: - 2
