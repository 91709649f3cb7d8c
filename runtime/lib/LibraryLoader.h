//===- LibraryLoader.h - Libraries the runtime loads with dlopen ---*- C++ -*-===//
//
// The emulator plugin and the compiler library are found the same way: the path in an
// environment variable, else beside the runtime's code (its directory and ../lib), else
// the loader's search path; loaded RTLD_LOCAL so that their LLVM stays out of the global
// symbol namespace.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_LIBRARYLOADER_H
#define MLA_RUNTIME_LIB_LIBRARYLOADER_H

#include <string>

namespace mla::rt {

/// The directory holding the runtime's code (its shared library or executable), or ""
/// when it cannot be told.
std::string runtimeCodeDirectory();

/// A symbol of a library loaded by loadLibrarySymbol, or (symbol null) every candidate
/// tried and why it failed, "; "-separated.
struct LibrarySymbol {
  void *symbol = nullptr;
  std::string tried;
};

/// Loads `library` from $`pathVariable` when it is set, else from the runtime's
/// directory, its ../lib and the loader's search path, and returns `symbol` from the
/// first candidate that has it. A candidate without the symbol is named in `tried`
/// followed by " has no <symbol>" and `missingSymbolNote`.
LibrarySymbol loadLibrarySymbol(const char *pathVariable, const std::string &library,
                                const char *symbol, const std::string &missingSymbolNote);

} // namespace mla::rt

#endif // MLA_RUNTIME_LIB_LIBRARYLOADER_H
