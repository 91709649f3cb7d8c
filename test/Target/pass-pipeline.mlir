// --pass-pipeline lowers the input before code generation: a gpu.func with a
// workgroup (LDS) attribution and an LDS DMA (amdgpu.gather_to_lds) goes
// through the upstream AMDGPU and GPU to ROCDL conversions inside
// mla-compile. The attribution becomes the kernel's static LDS.
//
// RUN: mla-compile %s -o %t.hsaco --print-kernel-resources \
// RUN:   --pass-pipeline='builtin.module(convert-amdgpu-to-rocdl{chipset=gfx950},gpu.module(convert-gpu-to-rocdl{chipset=gfx950}),reconcile-unrealized-casts)' \
// RUN:   | FileCheck %s --check-prefix=RES
// RUN: llvm-objdump -d --mcpu=gfx950 %t.hsaco | FileCheck %s
// Without the pipeline the gpu.func cannot be translated.
// RUN: not mla-compile %s 2>&1 | FileCheck %s --check-prefix=NOPIPE

// RES: kernel @g2l: {{.*}} group_segment_fixed_size=1024 private_segment_fixed_size=0

// CHECK-LABEL: <g2l>:
// CHECK: global_load_lds_dwordx4
// CHECK: s_waitcnt vmcnt(0)
// CHECK: s_barrier
// CHECK: ds_read_b32

// NOPIPE: error: unsupported GPU operation: gpu.func

module attributes {gpu.container_module} {
  gpu.module @kernels [#rocdl.target<chip = "gfx950">] {
    gpu.func @g2l(%a: memref<4096xf32>, %out: memref<4096xf32>)
        workgroup(%lds : memref<256xf32, #gpu.address_space<workgroup>>) kernel
        attributes {known_block_size = array<i32: 256, 1, 1>} {
      %tid = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c0 = arith.constant 0 : index
      %off = arith.muli %tid, %c4 : index
      amdgpu.gather_to_lds %a[%off], %lds[%c0] : vector<4xf32>, memref<4096xf32>, memref<256xf32, #gpu.address_space<workgroup>>
      amdgpu.memory_counter_wait load(0)
      amdgpu.lds_barrier
      %v = memref.load %lds[%off] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%off] : memref<4096xf32>
      gpu.return
    }
  }
}
