//===- CodeObject.h - AMDGPU HSA code objects (HSACO) ------------*- C++ -*-===//
//
// Loads an AMDGPU code object (ELF64, EM_AMDGPU), its `amdhsa.kernels` metadata
// note (msgpack) and each kernel's 64-byte kernel descriptor (`NAME.kd`).
// Every malformed input is reported as an Error naming the problem.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_CODEOBJECT_H
#define MLA_RUNTIME_CODEOBJECT_H

#include "mla/Runtime/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mla::rt {

/// The `.value_kind` of a kernel argument in the amdhsa metadata.
enum class ArgKind : uint8_t {
  ByValue,
  GlobalBuffer,
  DynamicSharedPointer,
  HiddenBlockCountX,
  HiddenBlockCountY,
  HiddenBlockCountZ,
  HiddenGroupSizeX,
  HiddenGroupSizeY,
  HiddenGroupSizeZ,
  HiddenRemainderX,
  HiddenRemainderY,
  HiddenRemainderZ,
  HiddenGlobalOffsetX,
  HiddenGlobalOffsetY,
  HiddenGlobalOffsetZ,
  HiddenGridDims,
  HiddenDynamicLdsSize,
  HiddenPrivateBase,
  HiddenSharedBase,
  HiddenQueuePtr,
  /// Any other `hidden_*` kind (printf buffer, hostcall, heap, ...): zero-filled.
  HiddenOther,
  /// A non-hidden kind the runtime does not know how to fill (image, sampler, pipe...).
  Unsupported,
};

/// One entry of a kernel's `.args` metadata.
struct KernelArgInfo {
  std::string name;          ///< `.name`, may be empty.
  std::string valueKindName; ///< `.value_kind` as spelled in the metadata.
  ArgKind kind = ArgKind::Unsupported;
  uint32_t offset = 0; ///< Byte offset in the kernarg segment.
  uint32_t size = 0;   ///< Size in bytes.
  std::string addressSpace; ///< `.address_space` for pointers, else empty.
  /// `.type_name` (e.g. "int", "float"), empty when the metadata has none.
  std::string typeName;
  /// True for `hidden_*` arguments, which the runtime fills.
  bool isHidden() const { return valueKindName.compare(0, 7, "hidden_") == 0; }
};

/// The 64-byte kernel descriptor (llvm/Support/AMDHSAKernelDescriptor.h) with
/// accessors for the bit fields the runtime and emulator use.
struct KernelDescriptor {
  uint32_t groupSegmentFixedSize = 0;
  uint32_t privateSegmentFixedSize = 0;
  uint32_t kernargSize = 0;
  int64_t kernelCodeEntryByteOffset = 0;
  uint32_t computePgmRsrc3 = 0;
  uint32_t computePgmRsrc1 = 0;
  uint32_t computePgmRsrc2 = 0;
  uint16_t kernelCodeProperties = 0;
  uint16_t kernargPreload = 0;

  /// FLOAT_DENORM_MODE_32 (0 flush src+dst, 1 flush dst, 2 flush src, 3 none).
  unsigned floatDenormMode32() const { return (computePgmRsrc1 >> 16) & 3; }
  /// FLOAT_DENORM_MODE_16_64.
  unsigned floatDenormMode16_64() const { return (computePgmRsrc1 >> 18) & 3; }
  bool enableDx10Clamp() const { return (computePgmRsrc1 >> 21) & 1; }
  bool enableIeeeMode() const { return (computePgmRsrc1 >> 23) & 1; }
  bool enablePrivateSegment() const { return computePgmRsrc2 & 1; }
  /// USER_SGPR_COUNT: user SGPRs the hardware initialises.
  unsigned userSgprCount() const { return (computePgmRsrc2 >> 1) & 31; }
  bool enableSgprWorkgroupId(unsigned dim) const { return (computePgmRsrc2 >> (7 + dim)) & 1; }
  bool enableSgprWorkgroupInfo() const { return (computePgmRsrc2 >> 10) & 1; }
  /// ENABLE_VGPR_WORKITEM_ID: 0 = x, 1 = x,y, 2 = x,y,z.
  unsigned enableVgprWorkitemId() const { return (computePgmRsrc2 >> 11) & 3; }
  /// ACCUM_OFFSET (gfx90a+): first AGPR in the unified VGPR file is 4*(value+1).
  unsigned accumOffset() const { return ((computePgmRsrc3 & 63) + 1) * 4; }
  /// GRANULATED_WORKITEM_VGPR_COUNT (gfx90a+, wave64): the unified file's
  /// allocation, architectural VGPRs and AGPRs together, in granules of 8.
  unsigned vgprAllocation() const { return ((computePgmRsrc1 & 63) + 1) * 8; }
  bool enableSgprPrivateSegmentBuffer() const { return kernelCodeProperties & 1; }
  bool enableSgprDispatchPtr() const { return (kernelCodeProperties >> 1) & 1; }
  bool enableSgprQueuePtr() const { return (kernelCodeProperties >> 2) & 1; }
  bool enableSgprKernargSegmentPtr() const { return (kernelCodeProperties >> 3) & 1; }
  bool enableSgprDispatchId() const { return (kernelCodeProperties >> 4) & 1; }
  bool enableSgprFlatScratchInit() const { return (kernelCodeProperties >> 5) & 1; }
  bool enableSgprPrivateSegmentSize() const { return (kernelCodeProperties >> 6) & 1; }
  bool enableWavefrontSize32() const { return (kernelCodeProperties >> 10) & 1; }
  /// KERNARG_PRELOAD_SPEC_LENGTH: kernarg dwords preloaded into user SGPRs.
  unsigned kernargPreloadLength() const { return kernargPreload & 127; }
  /// KERNARG_PRELOAD_SPEC_OFFSET, in dwords.
  unsigned kernargPreloadOffset() const { return (kernargPreload >> 7) & 511; }
};

/// Everything known about one kernel of a code object.
struct KernelInfo {
  std::string name;        ///< `.name` (the kernel's function symbol).
  std::string symbolName;  ///< `.symbol` (the descriptor symbol, NAME.kd).
  std::vector<KernelArgInfo> args; ///< In metadata order, hidden ones included.
  uint32_t kernargSegmentSize = 0;
  uint32_t kernargSegmentAlign = 0;
  uint32_t groupSegmentFixedSize = 0;
  uint32_t privateSegmentFixedSize = 0;
  uint32_t sgprCount = 0;
  uint32_t vgprCount = 0;
  uint32_t agprCount = 0;
  uint32_t wavefrontSize = 0;
  uint32_t maxFlatWorkgroupSize = 0;
  bool usesDynamicStack = false;

  KernelDescriptor descriptor;
  uint64_t descriptorAddress = 0; ///< ELF virtual address of NAME.kd.
  uint64_t codeAddress = 0;       ///< Virtual address of the first instruction.
  uint64_t codeSize = 0;          ///< Size of the kernel's function symbol (0 if unknown).

  /// The explicit (non-hidden) arguments, in order.
  std::vector<const KernelArgInfo *> explicitArgs() const;
};

/// A loaded code object. Immutable after loading.
class CodeObject {
public:
  /// Reads and validates the code object at \p path.
  static Expected<std::unique_ptr<CodeObject>> loadFile(std::string_view path);
  /// Validates a code object held in memory (the bytes are copied).
  /// \p description names the source in error messages.
  static Expected<std::unique_ptr<CodeObject>>
  loadFromMemory(Span<const uint8_t> bytes, std::string_view description = "<memory>");

  const std::vector<KernelInfo> &kernels() const { return kernels_; }
  /// The kernel named \p name, or an error listing the kernels that exist.
  Expected<const KernelInfo &> getKernel(std::string_view name) const;
  /// `amdhsa.target`, e.g. "amdgcn-amd-amdhsa--gfx950".
  std::string_view target() const { return target_; }
  /// Bytes of the loaded image (all PT_LOAD segments placed at their virtual
  /// addresses, zero-filled gaps); index = virtual address.
  Span<const uint8_t> loadedImage() const { return image_; }
  /// The code object file as given (what HIP's hipModuleLoadData takes).
  Span<const uint8_t> fileBytes() const { return file_; }
  /// \p size bytes at virtual address \p address of the loaded image.
  Expected<Span<const uint8_t>> bytesAt(uint64_t address, uint64_t size) const;
  std::string_view description() const { return description_; }
  /// A process-unique id (used to key caches of decoded programs).
  uint64_t id() const { return id_; }

private:
  CodeObject() = default;
  Error parse(Span<const uint8_t> bytes);

  std::string description_;
  std::string target_;
  std::vector<uint8_t> image_;
  std::vector<uint8_t> file_;
  std::vector<KernelInfo> kernels_;
  uint64_t id_ = 0;
};

} // namespace mla::rt

#endif // MLA_RUNTIME_CODEOBJECT_H
