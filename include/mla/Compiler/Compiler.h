//===- Compiler.h - decode kernels from a configuration ----------*- C++ -*-===//
//
// The compiler as a library: builds the mla module of a decode configuration, runs
// the mla-to-rocdl pipeline and emits the gfx950 code object, in-process. The end-to-end
// tests and the tools use this; mla-opt/mla-compile are its command-line faces. The
// runtime never links it: it loads libmla_compiler.so, which exports this through the C
// entry point of mla/Kernel/CompilerAbi.h, only when a kernel is in no bundle or cache.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_COMPILER_COMPILER_H
#define MLA_COMPILER_COMPILER_H

#include "mla/Kernel/DecodeConfig.h"
#include "mla/Kernel/KernelContract.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mla {

/// The compiled kernels of a configuration.
struct DecodeKernels {
  /// The code object holding both kernels.
  std::vector<char> codeObject;
  /// Their symbol names in it.
  std::string attentionKernel = kernel::kAttentionKernelName;
  std::string combineKernel = kernel::kCombineKernelName;
};

/// The mla module (problem ops) of `config`, as MLIR text.
std::string decodeModuleSource(const DecodeConfig &config);

/// Compiles `config`'s kernels to a gfx950 code object. An invalid configuration or a
/// compilation failure is an error carrying the diagnostics.
llvm::Expected<DecodeKernels> compileDecodeKernels(const DecodeConfig &config);

/// A string that changes whenever the generated code may change (the cache key's
/// compiler part): kGeneratedCodeVersion.
inline const char *compilerVersion() { return kGeneratedCodeVersion; }

} // namespace mla

#endif // MLA_COMPILER_COMPILER_H
