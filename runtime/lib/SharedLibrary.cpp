//===- SharedLibrary.cpp - libmla.so, the installed C++ library ----------===//
//
// libmla.so is the compiler (configuration -> code object), the runtime (code
// objects, devices, the emulator) and the Decoder, linked whole from their static
// libraries (runtime/CMakeLists.txt); it depends only on Debian's libMLIR/libLLVM.
// This file gives the target a source of its own and the library a queryable name.
//
//===----------------------------------------------------------------------===//
#include "mla/Runtime/Decoder.h"

namespace mla::rt {
/// The installed library's name (what an out-of-tree consumer links: mla::mla).
extern const char kSharedLibraryName[];
const char kSharedLibraryName[] = "libmla";
} // namespace mla::rt
