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
  let summary = "Lower mla.cta_combine to scf/arith/vector/amdgpu/llvm and rocdl math";
  let description = [{
    One 64-lane CTA merges one 64-column slice of one (row, head): lane `8 c + g` takes
    columns `8 c .. 8 c + 7` of the slice from splits `g, g + 8, ...`. Every partial load
    of the row is issued before the first is used. With `t_s = lse_s log2(e)`:
    `m = max_s t_s`, `W = sum_s 2^(t_s - m)`, `out = (sum_s 2^(t_s - m) o_s) * (1 / W)`
    accumulated in f32 (each lane in split order, then the 8 split groups pairwise with
    DPP) and rounded to bf16; lane 0 of slice 0 writes `lse = (m + log2 W) ln 2`. When
    every split is empty (`m = -inf`) the row gets `out = 0`, `lse = -inf`. Exponentials
    use `rocdl.exp2`/`rocdl.log`, the reciprocal `rocdl.rcp` (no device libraries).
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::vector::VectorDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def MLALowerAttention : Pass<"mla-lower-attention", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower mla.cta_attend to the gfx950 block pipeline (F4-F14)";
  let description = [{
    Expands each CTA's split-KV attention into the seed's block pipeline: the per-row Q
    split into fp8 hi + lo (F8); blocks of 128 tokens with the K rows DMA'd
    (`rocdl.global.load.lds`, 16 B a lane, XOR-swizzled by the source each lane loads)
    into one of two LDS slots, block b+1's DMA spread over block b's stages (F4-F7);
    9 fp8 MFMAs of QK per wave per block (F9); the online softmax with the cross-wave
    row max and P's hi/lo in LDS (F10); PV with `rocdl.ds.read.tr8.b64` straight from
    the K slot and 8 MFMAs (F11); the epilogue (F12); the causal mask on the crossing
    block only (F13); 64-bit DMA offsets for `wide_kv` (F14). LDS accesses carry alias
    scopes so the backend keeps the DMA in flight; the kernel places its own waits.
    The layout is mla/Kernel/AttentionLayout.h (docs/attention-kernel.md).
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect"];
}

#endif // MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD
