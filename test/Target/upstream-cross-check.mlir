// Cross-check of mla-compile against upstream MLIR's route to a code object,
// --gpu-module-to-binary with #rocdl.target<O = 3, abi = "500"> (toolchain
// doc B.2). Upstream needs a ROCm-style toolkit directory holding
// llvm/bin/ld.lld; a fake one with a symlink to Debian's ld.lld does. Both
// routes must give the same kernel descriptor directives (registers, LDS,
// scratch, code object version) and the same instruction stream.
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir --dump-isa=%t.ours.s -o %t.hsaco \
// RUN:   | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: rm -rf %t.rocm && mkdir -p %t.rocm/llvm/bin && ln -s %llvm_tools_dir/ld.lld %t.rocm/llvm/bin/ld.lld \
// RUN:   && mla-opt %S/Inputs/gfx950-tile-kernel.mlir --gpu-module-to-binary="format=isa toolkit=%t.rocm" \
// RUN:   | sed -e 's/\\0A/\n/g' -e 's/\\09/\t/g' -e 's/\\22/"/g' > %t.upstream.s \
// RUN:   && FileCheck %s --check-prefix=ISA < %t.upstream.s
// RUN: FileCheck %s --check-prefix=ISA < %t.ours.s
//
// Same .amdhsa_* directives, same instructions (in order):
// RUN: grep -E '^\s*\.amdhsa_' %t.ours.s > %t.ours.directives \
// RUN:   && grep -E '^\s*\.amdhsa_' %t.upstream.s > %t.upstream.directives \
// RUN:   && diff %t.upstream.directives %t.ours.directives | FileCheck %s --allow-empty --check-prefix=SAME
// RUN: grep -E '^\s+(s|v|ds|global|buffer|scratch)_' %t.ours.s > %t.ours.insts \
// RUN:   && grep -E '^\s+(s|v|ds|global|buffer|scratch)_' %t.upstream.s > %t.upstream.insts \
// RUN:   && diff %t.upstream.insts %t.ours.insts | FileCheck %s --allow-empty --check-prefix=SAME
//
// Upstream's binary route works with the same fake toolkit.
// RUN: mla-opt %S/Inputs/gfx950-tile-kernel.mlir --gpu-module-to-binary="format=bin toolkit=%t.rocm" \
// RUN:   | FileCheck %s --check-prefix=BIN

// QUIET-NOT: {{.}}
// SAME-NOT: {{.}}

// ISA: .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
// ISA: .amdhsa_code_object_version 5
// ISA-COUNT-4: global_load_lds_dwordx4
// ISA-COUNT-8: ds_read_b64_tr_b8
// ISA-COUNT-2: v_mfma_f32_16x16x128_f8f6f4
// ISA: .amdhsa_group_segment_fixed_size 4096
// ISA: .amdhsa_private_segment_fixed_size 0

// BIN: gpu.binary @kernels [#gpu.object<#rocdl.target<O = 3, chip = "gfx950", abi = "500">, bin = "\7FELF
