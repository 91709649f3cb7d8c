//===- CompilerLibrary.cpp - The compiler, loaded when a kernel is missing -===//
//
// See CompilerLibrary.h.
//
//===----------------------------------------------------------------------===//
#include "CompilerLibrary.h"

#include "mla/Kernel/CompilerAbi.h"
#include "lib/Support.h"

#include <cstdlib>
#include <cstring>
#include <mutex>


using Twine = mla::rt::support::Msg;
using namespace mla;
using namespace mla::rt;

namespace {
using mla::rt::support::makeError;

/// The entry point, or the sentence saying why there is none (looked up once).
struct CompilerEntry {
  MlaCompileDecodeKernelsFn compile = nullptr;
  std::string why;
};

const CompilerEntry &compilerEntry() {
  static const CompilerEntry entry = [] {
    CompilerEntry e;
    LibrarySymbol found = loadLibrarySymbol("MLA_COMPILER_LIBRARY", kCompilerLibraryName,
                                            MLA_COMPILER_ENTRY_SYMBOL, "");
    if (found.symbol) {
      e.compile = reinterpret_cast<MlaCompileDecodeKernelsFn>(found.symbol);
      return e;
    }
    e.why = "the compiler library " + std::string(kCompilerLibraryName) +
            " is not installed (tried: " + found.tried + ")";
    return e;
  }();
  return entry;
}

struct SinkResult {
  std::vector<uint8_t> code;
  std::string error;
};

void sink(void *context, const char *data, size_t size, int isError) {
  auto *result = static_cast<SinkResult *>(context);
  if (isError)
    result->error.assign(data, size);
  else
    result->code.assign(reinterpret_cast<const uint8_t *>(data),
                        reinterpret_cast<const uint8_t *>(data) + size);
}
} // namespace


Expected<std::vector<uint8_t>> mla::rt::compileWithCompilerLibrary(const DecodeConfig &config) {
  static std::mutex mutex; // MLIR contexts are per call, but one compile at a time is plenty
  const CompilerEntry &entry = compilerEntry();
  if (!entry.compile)
    return makeError("no kernel for " + config.key() + " in a kernel bundle or the kernel " +
                     "cache, and " + entry.why + "; build the kernels on a machine with the " +
                     "compiler: mla-bundle DIR --config " + config.key() +
                     ", then set MLA_KERNEL_BUNDLE=DIR (docs/deployment.md)");
  MlaDecodeConfigAbi abi{MLA_COMPILER_ABI_VERSION, config.heads,       config.qlen,
                         int32_t(config.wideKv),   int32_t(config.combineLse),
                         int32_t(config.wspec)};
  SinkResult result;
  const char *version = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  int status = entry.compile(&abi, &version, sink, &result);
  if (!version || std::strcmp(version, kGeneratedCodeVersion) != 0)
    return makeError("the compiler library generates code version " +
                     Twine(version ? version : "(none)") + ", this runtime expects " +
                     kGeneratedCodeVersion);
  if (status != 0)
    return makeError(result.error.empty() ? "the compiler library failed" : result.error);
  return std::move(result.code);
}
