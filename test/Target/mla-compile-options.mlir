// Bad command lines and environments: each fails with a message naming the
// problem.
//
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --chip=gfx999 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --features=+nosuchfeature 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --features=sramecc 2>&1 | FileCheck %s --check-prefix=SIGN
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir -O7 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --pass-pipeline='builtin.module(no-such-pass)' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPELINE
// RUN: env MLA_LD_LLD=%t.no-such-ld.lld not mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.hsaco 2>&1 \
// RUN:   | FileCheck %s --check-prefix=LLD -DPATH=%t.no-such-ld.lld
// RUN: not mla-compile %t.no-such-input.mlir 2>&1 | FileCheck %s --check-prefix=INPUT
// RUN: not mla-compile %s --split-input-file -o %t.hsaco 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o /dev/full 2>&1 | FileCheck %s --check-prefix=WRITE
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --dump-isa=/dev/full 2>&1 | FileCheck %s --check-prefix=WRITE
// RUN: not mla-compile %s 2>&1 | FileCheck %s --check-prefix=PARSE

// CHIP: error: unknown AMDGPU processor 'gfx999' for triple 'amdgcn-amd-amdhsa'
// FEATURE: error: unknown AMDGPU subtarget feature 'nosuchfeature'
// SIGN: error: subtarget feature 'sramecc' must start with '+' or '-'
// OPT: error: optimisation level must be 0..3, got 7
// PIPELINE: error: invalid --pass-pipeline: {{.*}}'no-such-pass' does not refer to a registered pass
// LLD: error: ld.lld not found or not executable: '[[PATH]]' (set the environment variable MLA_LD_LLD to an ld.lld)
// INPUT: mla-compile: cannot read input file '{{.*}}no-such-input.mlir': No such file or directory
// SPLIT: mla-compile: -o cannot be combined with --split-input-file
// WRITE: mla-compile: cannot write '/dev/full': No space left on device
// PARSE: mla-compile-options.mlir:[[@LINE+1]]:1: error: custom op 'this' is unknown
this is not MLIR
