//===- Passes.td - mla pass definitions --------------------*- tablegen -*-===//

#ifndef MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD
#define MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MLAOutlineKernels : Pass<"mla-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline the problem ops into gfx950 kernels with their CTA decomposition";
  let description = [{
    Turns every function made of `mla.split_kv_decode` / `mla.combine` ops into a
    `gpu.module` holding one kernel per op (the runtime is the host; the function is
    erased). The kernels take flat global buffers and i32 sizes (docs/kernel-abi.md).

    The attention kernel is one launch of 512-thread CTAs, one CTA per (request, head
    group, split) (F1, F2), in an XCD-aware order (F3): flat id
    `bid = x + 8 * (g + G * y)` serves unit `u = x + 8 * y = request * NS + split` and head
    group `g`, so every head group of a unit has the same `bid mod 8`, hence the same XCD.
    The grid is `roundup(B * NS, 8) * G`; CTAs past the last unit exit. Each CTA's work is
    an `mla.cta_attend`.

    The combine kernel is one 64-thread CTA per (query row, head), each an `mla.cta_combine`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect"];
}

def MLALowerCombine : Pass<"mla-lower-combine", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower mla.cta_combine to scf/arith/vector/llvm and rocdl math";
  let description = [{
    Each of the CTA's 64 lanes takes 8 of the 512 value columns of one (row, head):
    `m = max_s lse_s`, `L = m + ln sum_s exp(lse_s - m)`, `out = sum_s exp(lse_s - L) o_s`
    accumulated in f32 and rounded to bf16; lane 0 writes `lse = L`. When every split is
    empty (`m = -inf`) the row gets `out = 0`, `lse = -inf`. Exponentials use
    `rocdl.exp2`/`rocdl.log` on pre-scaled arguments (no device libraries).
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

#endif // MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD
