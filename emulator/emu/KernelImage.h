//===- KernelImage.h - What the emulator needs to know of a kernel -*- C++ -*-===//
//
// The emulator's own view of a kernel: the runtime (runtime/lib/EmuDevice.cpp) fills it
// from the code object's metadata and kernel descriptor. Only the fields the emulator
// reads; the bit fields are decoded here from the raw descriptor words (AMDGPU
// kernel-descriptor layout for gfx9), independently of the runtime's KernelDescriptor.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_KERNELIMAGE_H
#define MLA_RUNTIME_EMU_KERNELIMAGE_H

#include <cstdint>
#include <string>

namespace mla::emu {

struct KernelImage {
  std::string name;             ///< The kernel's symbol (for errors and reports).
  uint64_t codeAddress = 0;     ///< Virtual address of the first instruction.
  uint64_t codeSize = 0;        ///< Bytes of code (0: up to the end of the image).
  uint32_t ldsBytes = 0;        ///< Group segment fixed size.
  uint32_t scratchBytes = 0;    ///< Private segment fixed size, per work-item.
  // Raw kernel-descriptor words.
  uint32_t computePgmRsrc1 = 0;
  uint32_t computePgmRsrc2 = 0;
  uint16_t kernelCodeProperties = 0;
  uint16_t kernargPreload = 0;

  // COMPUTE_PGM_RSRC1.
  unsigned floatDenormMode32() const { return (computePgmRsrc1 >> 16) & 3; }
  unsigned floatDenormMode16_64() const { return (computePgmRsrc1 >> 18) & 3; }
  // COMPUTE_PGM_RSRC2.
  bool enablePrivateSegment() const { return computePgmRsrc2 & 1; }
  unsigned userSgprCount() const { return (computePgmRsrc2 >> 1) & 31; }
  bool enableSgprWorkgroupId(unsigned dim) const { return (computePgmRsrc2 >> (7 + dim)) & 1; }
  bool enableSgprWorkgroupInfo() const { return (computePgmRsrc2 >> 10) & 1; }
  unsigned enableVgprWorkitemId() const { return (computePgmRsrc2 >> 11) & 3; }
  // kernel_code_properties.
  bool enableSgprPrivateSegmentBuffer() const { return kernelCodeProperties & 1; }
  bool enableSgprDispatchPtr() const { return (kernelCodeProperties >> 1) & 1; }
  bool enableSgprQueuePtr() const { return (kernelCodeProperties >> 2) & 1; }
  bool enableSgprKernargSegmentPtr() const { return (kernelCodeProperties >> 3) & 1; }
  bool enableSgprDispatchId() const { return (kernelCodeProperties >> 4) & 1; }
  bool enableSgprFlatScratchInit() const { return (kernelCodeProperties >> 5) & 1; }
  bool enableSgprPrivateSegmentSize() const { return (kernelCodeProperties >> 6) & 1; }
  // kernarg_preload: KERNARG_PRELOAD_SPEC_LENGTH (7 bits) and _OFFSET (9 bits).
  unsigned kernargPreloadLength() const { return kernargPreload & 127; }
  unsigned kernargPreloadOffset() const { return (kernargPreload >> 7) & 511; }
};

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_KERNELIMAGE_H
