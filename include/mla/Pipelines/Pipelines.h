//===- Pipelines.h - the mla compilation pipelines ----------------*- C++ -*-===//

#ifndef MLA_PIPELINES_PIPELINES_H
#define MLA_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mla {

/// Options of the pipeline from mla problem ops to the LLVM dialect.
struct PipelineOptions {
  /// Target chip, checked by mla-outline-kernels (it must be gfx950) and passed to the
  /// upstream ROCDL conversions.
  std::string chip = "gfx950";
};

/// Adds the passes that take a module of mla problem ops to gpu.modules in the LLVM and
/// ROCDL dialects, ready for HSACO emission. Equivalent mla-opt command line:
///
///   mla-opt --mla-outline-kernels
///     --pass-pipeline='builtin.module(gpu.module(mla-tile-attention, mla-pipeline-blocks,
///        mla-lower-tile-ops, mla-lower-combine, convert-amdgpu-to-rocdl{chipset=gfx950},
///        convert-scf-to-cf, convert-gpu-to-rocdl{chipset=gfx950}),
///        reconcile-unrealized-casts)'
void buildMLAToROCDLPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers `--mla-to-rocdl` with mla-opt.
void registerMLAPipelines();

} // namespace mla

#endif // MLA_PIPELINES_PIPELINES_H
