//===- FuzzIR.cpp - libFuzzer: mla IR through parser, verifier, pipeline --===//
//
// Mutated MLIR text goes through what mla-opt/mla-compile do before code
// generation: the nesting check, the parser (with the mla and upstream dialects),
// the verifier and, for a module that verifies, the --mla-to-rocdl pipeline.
// Diagnostics are expected; a crash, hang or sanitizer report is a bug.
//
//===----------------------------------------------------------------------===//
#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Pipelines/Pipelines.h"
#include "mla/Support/InputLimits.h"

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
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {
mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mla::MLADialect, mlir::amdgpu::AMDGPUDialect, mlir::arith::ArithDialect,
                    mlir::func::FuncDialect, mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                    mlir::math::MathDialect, mlir::memref::MemRefDialect,
                    mlir::ROCDL::ROCDLDialect, mlir::scf::SCFDialect,
                    mlir::vector::VectorDialect>();
    mlir::registerAllExtensions(registry);
    auto *c = new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    c->printOpOnDiagnostic(false);
    // Diagnostics are the expected outcome of most inputs: drop them.
    c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  return *ctx;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer reads the NUL after the buffer's end (MemoryBuffer guarantees one;
  // libFuzzer's data has none): a std::string provides it.
  const std::string owned(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(owned);
  if (llvm::Error e = mla::checkNestingDepth(text, mla::kDefaultMaxNesting, "fuzz")) {
    llvm::consumeError(std::move(e));
    return 0;
  }
  mlir::ParserConfig config(&context());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz");
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  bool hasMla = false;
  module->walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "mla")
      hasMla = true;
  });
  if (!hasMla)
    return 0;
  mlir::PassManager pm(&context());
  mla::buildMLAToROCDLPipeline(pm, mla::PipelineOptions());
  (void)pm.run(*module);
  return 0;
}
