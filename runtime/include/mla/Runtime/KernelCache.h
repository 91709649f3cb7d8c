//===- KernelCache.h - The decode kernels' memory and disk cache -*- C++ -*-===//
//
// Compiled decode code objects are cached in memory (process-wide, keyed by
// configuration and compiler version) and on disk (see cacheDirectory());
// docs/decoder.md describes the entry format.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_KERNELCACHE_H
#define MLA_RUNTIME_KERNELCACHE_H

#include "mla/Compiler/Compiler.h"
#include "mla/Runtime/CodeObject.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mla::rt {

/// Where a compiled code object came from.
enum class KernelSource { Compiled, MemoryCache, DiskCache };

/// A compiled configuration: the code object and where it came from.
struct CompiledKernels {
  std::shared_ptr<const CodeObject> code;
  KernelSource source = KernelSource::Compiled;
  /// A sentence about the cache (e.g. that a corrupt entry was rebuilt); may be empty.
  std::string note;
};

/// The disk cache directory: $MLA_CACHE_DIR, else $XDG_CACHE_HOME/mla, else
/// $HOME/.cache/mla (empty when none of them is set: no disk cache).
std::string cacheDirectory();

/// Compiles `config` (or finds it in the memory cache, then the disk cache under
/// `cacheDir`; an empty `cacheDir` disables the disk cache). A disk entry that is
/// corrupt, truncated or for another key is reported in `note` and rebuilt.
llvm::Expected<CompiledKernels> getDecodeKernels(const DecodeConfig &config,
                                                 const std::string &cacheDir);

/// Drops the process-wide memory cache (tests use it to exercise the disk cache).
void clearDecodeKernelMemoryCache();

} // namespace mla::rt

#endif // MLA_RUNTIME_KERNELCACHE_H
