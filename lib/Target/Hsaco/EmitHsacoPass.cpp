//===- EmitHsacoPass.cpp - The mla-emit-hsaco pass ------------------------===//
//
// Compiles every gpu.module of a module with mla::compileToHsaco and writes
// the code objects. Files are written only once every gpu.module compiled.
//
//===----------------------------------------------------------------------===//

#include "mla/Target/Hsaco/Hsaco.h"
#include "mla/Target/Hsaco/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/ToolOutputFile.h"

namespace mla {
#define GEN_PASS_DEF_MLAEMITHSACO
#include "mla/Target/Hsaco/Passes.h.inc"
} // namespace mla

using namespace mlir;

namespace {

struct MLAEmitHsacoPass final
    : mla::impl::MLAEmitHsacoBase<MLAEmitHsacoPass> {
  using MLAEmitHsacoBase::MLAEmitHsacoBase;

  void runOnOperation() override {
    SmallVector<gpu::GPUModuleOp> gpuModules(
        getOperation().getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty()) {
      getOperation().emitError("mla-emit-hsaco: no gpu.module to compile");
      return signalPassFailure();
    }

    mla::HsacoOptions options;
    options.chip = chip;
    options.codeObjectVersion = codeObjectVersion;

    SmallVector<std::pair<std::string, SmallVector<char, 0>>> outputs;
    bool ok = true;
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      FailureOr<SmallVector<char, 0>> binary =
          mla::emitHsaco(gpuModule, options);
      if (failed(binary)) {
        ok = false;
        continue;
      }
      outputs.emplace_back(
          mla::getCodeObjectPath(output, gpuModule.getName(),
                                 gpuModules.size()),
          std::move(*binary));
    }
    if (!ok)
      return signalPassFailure();
    if (output.empty())
      return;

    for (auto &[path, binary] : outputs) {
      std::string error;
      std::unique_ptr<llvm::ToolOutputFile> file =
          openOutputFile(path, &error);
      if (!file) {
        getOperation().emitError("mla-emit-hsaco: ") << error;
        return signalPassFailure();
      }
      file->os().write(binary.data(), binary.size());
      file->os().flush();
      if (std::error_code ec = file->os().error()) {
        file->os().clear_error();
        getOperation().emitError("mla-emit-hsaco: cannot write '")
            << path << "': " << ec.message();
        return signalPassFailure();
      }
      file->keep();
    }
  }
};

} // namespace
