//===- KernelCache.h - The decode kernels' memory and disk cache -*- C++ -*-===//
//
// Compiled decode code objects are cached in memory (process-wide, keyed by
// configuration and compiler version) and on disk (see cacheDirectory());
// docs/decoder.md describes the entry format, docs/robustness.md the trust model:
// the directory must be the user's own (owned by them, writable by nobody else);
// an entry is read only if it is a regular file (no symbolic link, FIFO or device)
// of at most kMaxCacheEntryBytes, and is checked (key, length, checksum, loader)
// before use; entries are written through an exclusively created temporary file
// with a random name.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_KERNELCACHE_H
#define MLA_RUNTIME_KERNELCACHE_H

#include "mla/Kernel/DecodeConfig.h"
#include "mla/Runtime/CodeObject.h"

#include "mla/Runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mla::rt {

/// The largest disk cache entry read or written (a decode code object is well under
/// 1 MiB); a larger file is rejected from its size before any byte is read.
inline constexpr uint64_t kMaxCacheEntryBytes = uint64_t(64) << 20;

/// Where a compiled code object came from.
enum class KernelSource { Compiled, MemoryCache, DiskCache, Bundle };

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

/// The kernel bundles searched before the cache, in order: the directories of
/// $MLA_KERNEL_BUNDLE (':'-separated), then those added with addBundleDirectory(), then
/// the installed bundle (share/mla/kernels of the prefix whose lib/ holds the runtime;
/// docs/deployment.md).
std::vector<std::string> bundleDirectories();

/// Adds a bundle directory for this process (after $MLA_KERNEL_BUNDLE's); e.g. the Python
/// package's own `kernels` directory when it was installed from a wheel.
void addBundleDirectory(const std::string &dir);

/// Finds `config`'s kernels: the memory cache, then the kernel bundles
/// (bundleDirectories()), then the disk cache under `cacheDir` (an empty `cacheDir`
/// disables it); on a miss the compiler library compiles them (loaded on first use,
/// never linked: CompilerLibrary.h), and without it the error names the configuration
/// and the command that builds it. A disk entry that is corrupt, truncated, for another
/// key, too large or not a regular file is reported in `note` and rebuilt; a directory
/// owned by another user or writable by others is not used at all (also said in
/// `note`). A bundle entry is checked the same way; a bad one is skipped with a note.
Expected<CompiledKernels> getDecodeKernels(const DecodeConfig &config,
                                                 const std::string &cacheDir);

/// Writes `codeObject`, the kernels of `config`, into the bundle directory `dir`
/// (created if missing) as its entry (the disk cache's format, checked to load first).
/// mla-bundle writes bundles with this and writeBundleIndex.
Error writeBundleEntry(const std::string &dir, const DecodeConfig &config,
                             const std::vector<uint8_t> &codeObject);
/// Writes the bundle's index, `dir`/index.txt (one line a configuration: its key with
/// the generated-code version, a tab, the entry's file name), through a temporary file
/// renamed over it. The runtime reads entries by name; the index is for people and
/// packaging.
Error writeBundleIndex(const std::string &dir, const std::vector<DecodeConfig> &configs);

/// Drops the process-wide memory cache (tests use it to exercise the disk cache).
void clearDecodeKernelMemoryCache();

} // namespace mla::rt

#endif // MLA_RUNTIME_KERNELCACHE_H
