//===- EmuKernelImage.h - A code object's kernel as the emulator sees it -*- C++ -*-===//
//
// The one place the runtime's kernel metadata (rt::KernelInfo) becomes the emulator's
// emu::KernelImage: used by EmuDevice and by the tests and fuzzers that decode a
// kernel directly. Internal to the runtime (not installed).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_LIB_EMUKERNELIMAGE_H
#define MLA_RUNTIME_LIB_EMUKERNELIMAGE_H

#include "emu/KernelImage.h"
#include "mla/Runtime/CodeObject.h"

namespace mla::rt {

inline emu::KernelImage emuKernelImage(const KernelInfo &kernel) {
  emu::KernelImage image;
  image.name = kernel.name;
  image.codeAddress = kernel.codeAddress;
  image.codeSize = kernel.codeSize;
  image.ldsBytes = kernel.groupSegmentFixedSize;
  image.scratchBytes = kernel.privateSegmentFixedSize;
  image.computePgmRsrc1 = kernel.descriptor.computePgmRsrc1;
  image.computePgmRsrc2 = kernel.descriptor.computePgmRsrc2;
  image.kernelCodeProperties = kernel.descriptor.kernelCodeProperties;
  image.kernargPreload = kernel.descriptor.kernargPreload;
  return image;
}

} // namespace mla::rt

#endif // MLA_RUNTIME_LIB_EMUKERNELIMAGE_H
