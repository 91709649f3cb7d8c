// Inputs mla-compile cannot turn into a code object: each gives one clear
// error at the place it concerns, never a crash or a silent success.
//
// RUN: mla-compile %s --split-input-file -verify-diagnostics

// A module lowered for another chip (gfx942's fp8 is FNUZ, not OCP).
module attributes {gpu.container_module} {
  // expected-error @+1 {{gpu.module targets chip 'gfx942' but code is emitted for 'gfx950'}}
  gpu.module @wrong_chip [#rocdl.target<chip = "gfx942">] {
  }
}

// -----

// expected-error @+1 {{no gpu.module to compile}}
module {
  func.func @host() {
    return
  }
}

// -----

// A gpu.module that was not lowered to the LLVM/ROCDL dialects.
module attributes {gpu.container_module} {
  // expected-error @+1 {{failed to translate gpu.module @not_lowered to LLVM IR}}
  gpu.module @not_lowered [#rocdl.target<chip = "gfx950">] {
    // expected-error @+2 {{unsupported GPU operation: gpu.func}}
    // expected-error @+1 {{LLVM Translation failed for operation: gpu.func}}
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// More LDS than a gfx950 workgroup has (160 KiB = 163840 bytes): the AMDGPU
// backend's error, reported at the kernel.
module attributes {gpu.container_module} {
  gpu.module @too_much_lds [#rocdl.target<chip = "gfx950">] {
    llvm.mlir.global internal @big() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<163844 x i8>
    // expected-error @+1 {{LLVM: local memory (163844) exceeds limit (163840) in function 'k'}}
    llvm.func @k(%out: !llvm.ptr<1>, %n: i32) attributes {gpu.kernel, rocdl.kernel} {
      %p = llvm.mlir.addressof @big : !llvm.ptr<3>
      %tid = rocdl.workitem.id.x : i32
      %q = llvm.getelementptr %p[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      llvm.store %tid, %q : i32, !llvm.ptr<3>
      rocdl.barrier
      %r = llvm.getelementptr %p[%n] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %v = llvm.load %r : !llvm.ptr<3> -> i32
      llvm.store %v, %out : i32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// A call to a function no code object provides (here the ROCm device
// library's exp2, which math.exp2 lowers to): the link fails with ld.lld's
// message instead of producing a code object the loader would reject.
module attributes {gpu.container_module} {
  // expected-error-re @+1 {{ld.lld ({{.*}}) failed with exit code 1:{{.*}}undefined symbol: __ocml_exp2_f32}}
  gpu.module @undefined_call [#rocdl.target<chip = "gfx950">] {
    llvm.func @__ocml_exp2_f32(f32) -> f32
    llvm.func @k(%out: !llvm.ptr<1>, %x: f32) attributes {gpu.kernel, rocdl.kernel} {
      %y = llvm.call @__ocml_exp2_f32(%x) : (f32) -> f32
      llvm.store %y, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// An operation gfx950 does not have (an RDNA WMMA): instruction selection
// fails; the backend's fatal error becomes a diagnostic, not a crash.
module attributes {gpu.container_module} {
  // expected-error @+1 {{LLVM code generation failed: Cannot select: intrinsic %llvm.amdgcn.wmma.f32.16x16x16.f16}}
  gpu.module @no_such_instruction [#rocdl.target<chip = "gfx950">] {
    llvm.func @k(%out: !llvm.ptr<1>, %a: vector<16xf16>, %b: vector<16xf16>) attributes {gpu.kernel, rocdl.kernel} {
      %c = llvm.mlir.constant(dense<0.0> : vector<8xf32>) : vector<8xf32>
      %d = rocdl.wmma.f32.16x16x16.f16 %a, %b, %c : (vector<16xf16>, vector<16xf16>, vector<8xf32>) -> vector<8xf32>
      llvm.store %d, %out : vector<8xf32>, !llvm.ptr<1>
      llvm.return
    }
  }
}

// -----

// Every chunk is compiled independently: after the failures above, a good
// module still compiles (the recovered backend state did not leak into it).
module attributes {gpu.container_module} {
  gpu.module @fine [#rocdl.target<chip = "gfx950">] {
    llvm.func @copy(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {gpu.kernel, rocdl.kernel} {
      %v = llvm.load %in : !llvm.ptr<1> -> f32
      llvm.store %v, %out : f32, !llvm.ptr<1>
      llvm.return
    }
  }
}
