//===- Pipelines.h - the mla compilation pipelines ----------------*- C++ -*-===//

#ifndef MLA_PIPELINES_PIPELINES_H
#define MLA_PIPELINES_PIPELINES_H

#include "mla/Target/GFX950/GFX950.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mla {

/// Options of the pipeline from mla problem ops to the LLVM dialect: the C++ options
/// of buildMLAToROCDLPipeline and the textual options of mla-opt's
/// `--mla-to-rocdl='chip=...'` (one struct, as upstream's GPUToNVVMPipelineOptions).
struct PipelineOptions : mlir::PassPipelineOptions<PipelineOptions> {
  /// Target chip, checked by mla-outline-kernels (it must be gfx950) and passed to the
  /// upstream ROCDL conversions.
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target chip (must be gfx950, optionally with "
                                          "target features: gfx950:sramecc+:xnack-)"),
                           llvm::cl::init(gfx950::kChipName)};
};

/// Adds the passes that take a module of mla problem ops to gpu.modules in the LLVM and
/// ROCDL dialects, ready for HSACO emission. Equivalent mla-opt command line:
///
///   mla-opt --mla-outline-kernels
///     --pass-pipeline='builtin.module(gpu.module(mla-tile-attention, mla-warp-specialize,
///        mla-pipeline-blocks, mla-lower-warp-roles, mla-lower-tile-ops, mla-lower-combine,
///        convert-amdgpu-to-rocdl{chipset=gfx950}, convert-scf-to-cf,
///        convert-gpu-to-rocdl{chipset=gfx950}), reconcile-unrealized-casts)'
void buildMLAToROCDLPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers `--mla-to-rocdl` (option `chip`, default gfx950) with mla-opt.
void registerMLAPipelines();

} // namespace mla

#endif // MLA_PIPELINES_PIPELINES_H
