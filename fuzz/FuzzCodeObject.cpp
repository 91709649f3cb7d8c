//===- FuzzCodeObject.cpp - libFuzzer: the code-object loader -------------===//
//
// Mutated code objects go through the loader (ELF, metadata note, descriptors)
// and, for every kernel that loads, the emulator's decoder, as mla-run and the
// Decoder do before a launch. Errors are expected; crashes are bugs.
//
//===----------------------------------------------------------------------===//
#include "emu/Instructions.h"
#include "lib/EmuKernelImage.h"
#include "mla/Runtime/CodeObject.h"
#include "mla/Runtime/LLVMBridge.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto code = mla::rt::CodeObject::loadFromMemory(llvm::ArrayRef<uint8_t>(data, size), "fuzz");
  if (!code) {
    llvm::consumeError(code.takeError());
    return 0;
  }
  for (const mla::rt::KernelInfo &kernel : (*code)->kernels()) {
    auto program =
        mla::emu::decodeProgram((*code)->loadedImage(), mla::rt::emuKernelImage(kernel));
    if (!program)
      llvm::consumeError(program.takeError());
  }
  return 0;
}
