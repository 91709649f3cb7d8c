//===- Compiler.cpp - decode kernels from a configuration -----------------===//

#include "mla/Compiler/Compiler.h"

#include "mla/Dialect/MLA/IR/MLADialect.h"
#include "mla/Pipelines/Pipelines.h"
#include "mla/Target/Hsaco/Hsaco.h"

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
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mla::decodeModuleSource(const DecodeConfig &config) {
  std::string h = std::to_string(config.heads);
  std::string attrs =
      llvm::formatv("#mla.config<heads = {0}, qlen = {1}, wspec = {2}, wide_kv = {3}>",
                    config.heads, config.qlen, config.wspec ? "true" : "false",
                    config.wideKv ? "true" : "false")
          .str();
  const std::string d = std::to_string(kernel::kHeadDim),
                    dv = std::to_string(kernel::kLatentDim);
  std::string q = "memref<?x" + h + "x" + d + "xbf16>",
              o = "memref<?x" + h + "x?x" + dv + "xbf16>", l = "memref<?x" + h + "x?xf32>",
              out = "memref<?x" + h + "x" + dv + "xbf16>", lse = "memref<?x" + h + "xf32>";
  const std::string kv = "memref<?x" + d + "xf8E4M3FN>";
  // The DCP merge's inputs, ranks outermost as an all-gather lays them out.
  const std::string outs = "memref<?x?x" + h + "x" + dv + "xbf16>",
                    lses = "memref<?x?x" + h + "xf32>";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @mla_decode(%q: " << q << ", %kv: " << kv << ", "
     << "%pages: memref<?xi32>, %indptr: memref<?xi32>, %scale: f32, %vscale: f32, "
     << "%splits: index, %o: " << o << ", %l: " << l << ", %out: " << out << ", %lse: " << lse
     << ", %outs: " << outs << ", %lses: " << lses
     << ", %units: memref<?x4xi32>, %pieces: memref<?x2xi32>, %merges: memref<?x4xi32>) {\n"
     << "  mla.schedule indptr(%indptr) into units(%units) pieces(%pieces) merges(%merges) "
     << "{config = " << attrs
     << "} : memref<?xi32>, memref<?x4xi32>, memref<?x2xi32>, memref<?x4xi32>\n"
     << "  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale) "
     << "vscale(%vscale) splits(%splits) into o_part(%o) lse_part(%l) {config = " << attrs
     << "} : " << q << ", " << kv << ", memref<?xi32>, memref<?xi32>, " << o << ", " << l << "\n"
     << "  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale) "
     << "vscale(%vscale) splits(%splits) into o_part(%o) lse_part(%l) {config = " << attrs
     << ", fused_combine} : " << q << ", " << kv << ", memref<?xi32>, memref<?xi32>, " << o << ", "
     << l << "\n"
     << "  mla.split_kv_decode q(%q) kv(%kv) pages(%pages) indptr(%indptr) scale(%scale) "
     << "vscale(%vscale) splits(%splits) into o_part(%o) lse_part(%l) {config = " << attrs
     << ", ranges} : " << q << ", " << kv << ", memref<?xi32>, memref<?xi32>, " << o << ", " << l
     << "\n"
     << "  mla.combine o_part(%o) lse_part(%l) into out(%out)"
     << (config.combineLse ? " lse(%lse)" : "") << " {config = " << attrs << "} : " << o << ", "
     << l << ", " << out << (config.combineLse ? ", " + lse : std::string()) << "\n"
     << "  mla.combine o_part(%outs) lse_part(%lses) into out(%out) lse(%lse) {config = " << attrs
     << ", ranks_outermost} : " << outs << ", " << lses << ", " << out << ", " << lse << "\n"
     << "  return\n}\n";
  return s;
}

llvm::Expected<mla::DecodeKernels> mla::compileDecodeKernels(const DecodeConfig &config) {
  DialectRegistry registry;
  registry.insert<MLADialect, amdgpu::AMDGPUDialect, arith::ArithDialect, func::FuncDialect,
                  gpu::GPUDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  ROCDL::ROCDLDialect, scf::SCFDialect, vector::VectorDialect>();
  registerAllExtensions(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  MLIRContext context(registry);
  context.disableMultithreading();

  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream os(diagnostics);
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  auto fail = [&](llvm::StringRef what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "mla: cannot compile decode kernels for " +
                                       config.key() + ": " + what + "\n" + diagnostics);
  };

  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(decodeModuleSource(config), &context);
  if (!module)
    return fail("invalid configuration");
  PassManager pm(&context);
  buildMLAToROCDLPipeline(pm, PipelineOptions{});
  if (failed(pm.run(*module)))
    return fail("lowering failed");
  gpu::GPUModuleOp kernels;
  module->walk([&](gpu::GPUModuleOp m) { kernels = m; });
  if (!kernels)
    return fail("the pipeline produced no gpu.module");
  FailureOr<llvm::SmallVector<char, 0>> binary = emitHsaco(kernels, HsacoOptions{});
  if (failed(binary))
    return fail("code object emission failed");
  DecodeKernels result;
  result.codeObject.assign(binary->begin(), binary->end());
  return result;
}
