//===- mla-opt.cpp - the mla optimizer driver -----------------------------===//
//
// mlir-opt with the mla dialect and passes, plus the upstream dialects the pipeline lowers
// through (func, arith, scf, memref, vector, gpu, amdgpu, rocdl, llvm, math) and their
// LLVM-IR translations (needed to serialize gpu.modules to code objects).
//
//===----------------------------------------------------------------------===//

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Dialect/MLA/Transforms/Passes.h"
#include "mla/Pipelines/Pipelines.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mla/Support/InputLimits.h"
#include "mla/Support/OutputFile.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mla::registerMLAPasses();
  mla::registerMLAPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mla::MLADialect, mlir::amdgpu::AMDGPUDialect,
                  mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::ROCDL::ROCDLDialect, mlir::scf::SCFDialect,
                  mlir::vector::VectorDialect>();
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerROCDLDialectTranslation(registry);
  mlir::ROCDL::registerROCDLTargetInterfaceExternalModels(registry);

  llvm::InitLLVM initLLVM(argc, argv);
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "mla optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  // The input is read with a size limit and its nesting checked before the
  // (recursive) parser sees it: /dev/zero or 4000 nested regions end with an error.
  auto input = mla::readBoundedFile(inputFilename, mla::maxInputBytes(), "input file");
  if (!input) {
    llvm::errs() << "mla-opt: error: " << llvm::toString(input.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error e = mla::checkNestingDepth((*input)->getBuffer(), mla::maxNestingDepth(),
                                             inputFilename)) {
    llvm::errs() << "mla-opt: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  // Written to a temporary and renamed on success: a failed run leaves an existing
  // output file as it was.
  auto output = mla::OutputFile::create(outputFilename);
  if (!output) {
    llvm::errs() << "mla-opt: error: " << llvm::toString(output.takeError()) << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain((*output)->os(), std::move(*input), registry, config)))
    return 1;
  if (llvm::Error e = (*output)->commit()) {
    llvm::errs() << "mla-opt: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
