//===- CompilerLibrary.h - The compiler, loaded when a kernel is missing -*- C++ -*-===//
//
// The runtime never links the compiler (MLIR/LLVM). When a decode kernel is in no bundle
// and not in the kernel cache, KernelCache loads libmla_compiler.so with dlopen and calls
// its C entry point (mla/Kernel/CompilerAbi.h). Where it looks, in order:
// $MLA_COMPILER_LIBRARY; the directory of the code holding the runtime (the runtime's
// shared library, or the executable it is linked into) and ../lib beside it; then the
// dynamic loader's own search path.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_DECODER_COMPILERLIBRARY_H
#define MLA_RUNTIME_DECODER_COMPILERLIBRARY_H

#include "mla/Kernel/DecodeConfig.h"

#include "lib/LibraryLoader.h"
#include "mla/Runtime/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mla::rt {

/// The compiler library's file name.
inline constexpr char kCompilerLibraryName[] = "libmla_compiler.so";

/// Compiles `config` with the compiler library. An error when the library cannot be
/// found (naming the places searched), speaks another compiler ABI or generated-code
/// version, or the compilation fails (its diagnostics).
Expected<std::vector<uint8_t>> compileWithCompilerLibrary(const DecodeConfig &config);


} // namespace mla::rt

#endif // MLA_RUNTIME_DECODER_COMPILERLIBRARY_H
