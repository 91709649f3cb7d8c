//===- Compiler.h - decode kernels from a configuration ----------*- C++ -*-===//
//
// The compiler as a library: builds the mla module of a decode configuration, runs
// the mla-to-rocdl pipeline and emits the gfx950 code object, in-process. The runtime's
// Decoder and the end-to-end tests use this; mla-opt/mla-compile are its command-line
// faces.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_COMPILER_COMPILER_H
#define MLA_COMPILER_COMPILER_H

#include "mla/Kernel/KernelContract.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mla {

/// What a decode kernel pair is specialised for (the `#mla.config` parameters a user
/// chooses; the rest are fixed by the design).
struct DecodeConfig {
  int64_t heads = 12;
  int64_t qlen = 1;
  /// 64-bit DMA offsets, for KV pools of 4 GiB or more (F14).
  bool wideKv = false;
  /// The combine also writes the total LSE.
  bool combineLse = true;
  /// The warp-specialised attention kernel (F15, docs/warp-specialization.md): QK and
  /// PV waves run different code. Same numerics as the plain build.
  bool wspec = false;

  /// A stable text form, for cache keys and messages ("heads=12,qlen=1,...").
  std::string key() const;
};

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
/// compiler part).
const char *compilerVersion();

} // namespace mla

#endif // MLA_COMPILER_COMPILER_H
