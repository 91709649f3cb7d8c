//===- SharedLibrary.cpp - libmla.so, the installed C++ library ----------===//
//
// libmla.so is the runtime (code objects, devices, the emulator) and the Decoder, linked
// whole from their static libraries (runtime/CMakeLists.txt); it depends on Debian's
// libLLVM, never on libMLIR: the compiler is libmla_compiler.so, loaded on a kernel miss.
// This file gives the target a source of its own and the library a queryable name.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

namespace mla::rt {
/// The installed library's name (what an out-of-tree consumer links: mla::mla).
extern const char kSharedLibraryName[];
const char kSharedLibraryName[] = "libmla";
} // namespace mla::rt
