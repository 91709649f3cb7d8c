// The code object version is an option (500 by default, or 600); it reaches
// the ELF header (ABI version 3 for v5, 4 for v6) and the assembly. Other
// values are rejected with a diagnostic.
//
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.v5.hsaco --dump-isa \
// RUN:   | FileCheck %s --check-prefix=ISA5
// RUN: llvm-readelf -h %t.v5.hsaco | FileCheck %s --check-prefix=ELF5
// RUN: mla-compile %S/Inputs/gfx950-tile-kernel.mlir -o %t.v6.hsaco --code-object-version=600 --dump-isa \
// RUN:   | FileCheck %s --check-prefix=ISA6
// RUN: llvm-readelf -h %t.v6.hsaco | FileCheck %s --check-prefix=ELF6
// RUN: not mla-compile %S/Inputs/gfx950-tile-kernel.mlir --code-object-version=400 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BAD

// ISA5: .amdhsa_code_object_version 5
// ELF5: ABI Version: 3
// ISA6: .amdhsa_code_object_version 6
// ELF6: ABI Version: 4
// BAD: gfx950-tile-kernel.mlir:{{[0-9]+}}:{{[0-9]+}}: error: unsupported code object version 400 (expected 500 or 600)
