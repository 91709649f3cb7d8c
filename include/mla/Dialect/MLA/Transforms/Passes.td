//===- Passes.td - mla pass definitions --------------------*- tablegen -*-===//

#ifndef MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD
#define MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MLAOutlineKernels : Pass<"mla-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Outline the problem ops into gfx950 kernels with their CTA decomposition";
  let description = [{
    Turns every function made of `mla.split_kv_decode` / `mla.combine` ops into a
    `gpu.module` holding one kernel per op (the runtime is the host; the function is
    erased). The kernels take flat global buffers and i32 sizes in the order of the kernel ABI
    (mla/Kernel/KernelContract.h, docs/kernel-contract.md section 2).

    The attention kernel is one launch of 512-thread CTAs, one CTA per (request, head
    group, split) (F1, F2), in an XCD-aware order (F3): flat id
    `bid = x + 8 * (g + G * y)` serves unit `u = x + 8 * y = request * NS + split` and head
    group `g`, so every head group of a unit has the same `bid mod 8`, hence the same XCD.
    The grid is `roundup(B * NS, 8) * G`; CTAs past the last unit exit. Each CTA's work is
    an `mla.cta_attend`. With the `tickets` argument and a host-planned split of
    2..8 splits the combine is fused: each CTA then counts itself on its (request, head
    group)'s ticket (`mla.cta_split_ticket`) and the last merges the pair's rows with
    `mla.cta_combine`, one row a wave at a time. A `mla.split_kv_decode` with `ranges`
    becomes the range-schedule kernel `mla_attn_ranges` (F19): CTA `bid` serves range `x
    + 8 * y`; its prologue finds where the range starts (`mla.cta_range`), then a loop
    over the requests attends its piece of each (`mla.cta_attend` with `piece`, the loop
    annotated with LICM off) and thread 0 of head group 0 writes the schedule's tables.

    The combine kernel is one 64-thread CTA per (query row, head), each an `mla.cta_combine`.

    `chip` is the target the pipeline lowers for, parsed as an `mlir::amdgpu::Chipset`:
    a name that is not an AMDGPU chip, or a chip other than gfx950 (the kernels use its
    fp8 MFMA 16x16x128, 16-byte LDS DMA and transposing LDS reads), is an error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"::mla::gfx950::kChipName",
           "Target chip (must be gfx950)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::ROCDL::ROCDLDialect"];
}

def MLALowerSchedule : Pass<"mla-lower-schedule", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower mla.cta_schedule (the planner), mla.cta_unit (an attention CTA's own entry) and mla.cta_range (a range CTA's start) to scf/arith/gpu/llvm";
  let description = [{
    One wave computes the schedule of docs/kernel-contract.md ("The device schedule")
    from the device indptr: the block budget T (a binary search over whole-wave passes),
    each request's piece count and first piece (a wave scan per 64 requests), the
    request table and the unit table (idle units -1). Wave sums and scans use DPP
    (`amdgpu.dpp`, `rocdl.readlane`); a request of many pieces has its entries written
    by the whole wave (`rocdl.ballot` picks such requests). `mla.cta_unit` computes the
    same budget in wave 0 of an attention CTA and finds its own unit's entry and merge
    entry with a ballot per 64 requests, writing only those; the entry reaches the
    other waves through a 16-byte workgroup buffer and a barrier. `mla.cta_range` (the
    range schedule, "The range schedule") computes in wave 0 the batch's cost W (a wave
    sum) and, 64 requests at a time until found, the first request whose last block
    reaches the range's first position (a wave scan and a ballot), passed to the other
    waves the same way.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::amdgpu::AMDGPUDialect", "::mlir::ROCDL::ROCDLDialect"];
}

def MLALowerCombine : Pass<"mla-lower-combine", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower mla.cta_combine and mla.cta_split_ticket to scf/arith/vector/amdgpu/llvm and rocdl";
  let description = [{
    One 64-lane CTA merges one 64-column slice of one (row, head): lane `8 c + g` takes
    columns `8 c .. 8 c + 7` of the slice from splits `g, g + 8, ...`. Every partial load
    of the row is issued before the first is used. With `t_s = lse_s log2(e)`:
    `m = max_s t_s`, `W = sum_s 2^(t_s - m)`, `out = (sum_s 2^(t_s - m) o_s) * (1 / W)`
    accumulated in f32 (each lane in split order, then the 8 split groups pairwise with
    DPP) and rounded to bf16; lane 0 of slice 0 writes `lse = (m + log2 W) ln 2`. When
    every split is empty (`m = -inf`) the row gets `out = 0`, `lse = -inf`. Exponentials
    use `rocdl.exp2`/`rocdl.log`, the reciprocal `rocdl.rcp` (no device libraries).

    `mla.cta_split_ticket` (the fused combine's arrival) becomes an agent-scope release
    fence, a CTA barrier, thread 0's global atomic add on the ticket shared through an
    LDS word, another barrier, and in the CTA that counted last an agent-scope acquire
    fence and the ticket's reset to 0.
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::amdgpu::AMDGPUDialect",
                           "::mlir::vector::VectorDialect", "::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def MLATileAttention : Pass<"mla-tile-attention", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Express mla.cta_attend with the tile-level ops (one block at a time)";
  let description = [{
    Gives each attention kernel its LDS (one workgroup buffer laid out as
    mla/Kernel/AttentionLayout.h says), computes the CTA's work (the split's token
    range, the lane's query row, head and causal bound; F2, F13) and expresses the
    attention as tile ops: the Q split once per CTA (`mla.load_query`,
    `mla.split_query`, `mla.read_query`; F8), then a loop over the split's
    128-token blocks, each loading its page indices, DMA'ing its K into slot 0, waiting,
    `mla.qk_tile`, `mla.mask_logits`, `mla.softmax_update`, `mla.pv_tile` and a closing
    barrier, then `mla.attend_epilogue`. The loop is correct but not overlapped:
    `mla-pipeline-blocks` schedules it. In the warp-specialised build
    (`#mla.config<wspec = true>`) the loop is marked `mla.warp_specialize` for
    `mla-warp-specialize` instead, with its block DMA plan (`mla.dma_plan`, by the
    kernel's head groups: kernel::warp_roles::isComputeBound).
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect"];
}

def MLAPipelineBlocks : Pass<"mla-pipeline-blocks", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Double-buffer the attention block loop: slots, DMA spread, waits (F4-F6)";
  let description = [{
    Rewrites the block loop of `mla-tile-attention`: block 0's page indices and DMAs
    move before the loop, with the CTA's Q share loaded before them and split after
    them; block b reads slot b % 2 while the next block's DMAs fill the other slot, in
    three groups after the barrier that frees it, after the QK tile and after the mask
    (F6); the page indices two blocks ahead are loaded at the top of the loop; each
    `mla.kv_wait` gets the count of vector-memory operations issued after the DMAs it
    waits for; the closing barrier goes (the top barrier of the next block frees the
    slot).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def MLALowerTileOps : Pass<"mla-lower-tile-ops", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower the attention tile ops to amdgpu/rocdl (F5-F14), one pattern per op";
  let description = [{
    Each tile op becomes its gfx950 code: every lane-dependent address from the layout
    functions of mla/Kernel/AttentionLayout.h evaluated on IR values, every chip fact
    from mla/Target/GFX950/GFX950.h. Upstream `amdgpu` ops where they express what the
    kernel needs (`amdgpu.mfma` 16x16x128 fp8, `amdgpu.packed_trunc_2xfp8`,
    `amdgpu.ext_packed_fp8`, `amdgpu.memory_counter_wait`); `rocdl` where they do not
    (the LDS DMA and the transposing LDS read must carry LLVM alias scopes, which
    `amdgpu.gather_to_lds` and `amdgpu.transpose_load` cannot: without them the backend
    waits for every LDS DMA before the next LDS read and the overlap is lost). Run
    `convert-amdgpu-to-rocdl{chipset=gfx950}` after it.
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::math::MathDialect", "::mlir::amdgpu::AMDGPUDialect"];
}


def MLAWarpSpecialize : Pass<"mla-warp-specialize", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Split the attention block loop into a compute role and a DMA role (F15)";
  let description = [{
    Rewrites each block loop of `mla-tile-attention` marked `mla.warp_specialize`
    (the warp-specialised build, `#mla.config<wspec = true>`) and its
    `mla.attend_epilogue` into an `mla.warp_roles`: the compute role (waves 0..3)
    splits Q and, a block at a time, computes S, P and the running row sums of its two
    tiles and accumulates O over its 128 latents; the DMA role (waves 4..7) loads the
    page indices and issues every block's DMAs into the slot the compute role frees.
    Both roles meet the same barriers (K, B, C and A a block). Where barrier A sits and
    when the next block's DMAs go out is the loop's block DMA plan (`mla.dma_plan`,
    kernel::warp_roles::BlockDmaPlan); the DMA role runs at s_setprio
    kDmaRolePriority until its loop, raised already before the barrier of an
    `mla.cta_unit` in the kernel (the device schedule). The numerics are the plain build's
    (docs/warp-specialization.md). Runs before `mla-pipeline-blocks`, which leaves
    the role loops alone.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect",
                           "::mlir::vector::VectorDialect"];
}

def MLALowerWarpRoles : Pass<"mla-lower-warp-roles", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Lower mla.warp_roles and the role ops to amdgpu/rocdl (F15)";
  let description = [{
    `mla.warp_roles` becomes two branches on the wave index (uniform in the wave:
    readfirstlane of tid / 64), the compute region for waves 0..3 and the DMA region
    for waves 4..7; both regions meet the same barriers (the op's verifier). Each role
    op becomes the code of the plain tile op it stands for, with the role wave
    r = wave % 4 choosing its tiles: the compute role's tiles 2 r and 2 r + 1 (S and P)
    and latent tiles 8 r .. 8 r + 7 (O), the DMA role's page indices and DMAs of tiles
    2 r and 2 r + 1 (docs/warp-specialization.md).
    The `mla.lds_barrier` and `mla.kv_wait` inside the roles are left to
    `mla-lower-tile-ops`, which runs after it.
  }];
  let dependentDialects = ["::mlir::ROCDL::ROCDLDialect", "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::amdgpu::AMDGPUDialect"];
}

#endif // MLA_DIALECT_MLA_TRANSFORMS_PASSES_TD
