//===- CompilerEntry.cpp - The compiler library's C entry point -----------===//
//
// libmla_compiler.so's one export for the runtime (mla/Kernel/CompilerAbi.h): the runtime
// loads the library with dlopen only when a kernel is in no bundle and not in the cache.
//
//===----------------------------------------------------------------------===//

#include "mla/Compiler/Compiler.h"
#include "mla/Kernel/CompilerAbi.h"

#include "llvm/Support/Error.h"

#include <string>

extern "C" __attribute__((visibility("default"))) int
mla_compile_decode_kernels(const MlaDecodeConfigAbi *abi, const char **version,
                           MlaCompilerSink sink, void *context) {
  if (version)
    *version = mla::kGeneratedCodeVersion;
  auto fail = [&](const std::string &message) {
    sink(context, message.data(), message.size(), 1);
    return 1;
  };
  if (!abi || abi->abiVersion != MLA_COMPILER_ABI_VERSION)
    return fail("mla: the compiler library speaks compiler ABI " +
                std::to_string(MLA_COMPILER_ABI_VERSION) + ", the caller another one");
  mla::DecodeConfig config;
  config.heads = abi->heads;
  config.qlen = abi->qlen;
  config.wideKv = abi->wideKv != 0;
  config.combineLse = abi->combineLse != 0;
  config.wspec = abi->wspec != 0;
  llvm::Expected<mla::DecodeKernels> kernels = mla::compileDecodeKernels(config);
  if (!kernels)
    return fail(llvm::toString(kernels.takeError()));
  sink(context, kernels->codeObject.data(), kernels->codeObject.size(), 0);
  return 0;
}
