//===- Pipelines.cpp - the mla compilation pipelines ----------------------===//

#include "mla/Pipelines/Pipelines.h"

#include "mla/Dialect/MLA/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void mla::buildMLAToROCDLPipeline(OpPassManager &pm, const PipelineOptions &options) {
  MLAOutlineKernelsOptions outline;
  outline.chip = options.chip;
  pm.addPass(createMLAOutlineKernels(outline));
  // The upstream conversions parse their chipset as a bare processor name; the target
  // features a chip may carry ("gfx950:sramecc+:xnack-") do not change the ROCDL they
  // produce (they matter to code-object emission, which takes them separately).
  std::string processor = StringRef(options.chip).split(':').first.str();
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createMLATileAttention());
  kernels.addPass(createMLAWarpSpecialize());
  kernels.addPass(createMLAPipelineBlocks());
  kernels.addPass(createMLALowerWarpRoles());
  kernels.addPass(createMLALowerTileOps());
  kernels.addPass(createMLALowerCombine());
  kernels.addPass(createMLALowerSchedule());
  ConvertAMDGPUToROCDLPassOptions amdgpu;
  amdgpu.chipset = processor;
  kernels.addPass(createConvertAMDGPUToROCDLPass(amdgpu));
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = processor;
  kernels.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mla::registerMLAPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "mla-to-rocdl",
      "Lower mla problem ops to gpu.modules in the LLVM/ROCDL dialects for gfx950",
      buildMLAToROCDLPipeline);
}
