//===- LdsDma.h - LDS DMA (global_load_lds_*, buffer_load_* lds) rules -------===//
//
// Reference section 3.2: the LDS destination of lane `lane` is
//   M0 + inst_offset + lane * (size <= 4 ? 4 : 16)
// (the immediate offset is applied to both the global and the LDS address). Byte and
// short loads are extended to 32 bits (u: zero, s: sign); dwordx3 uses a 16-byte lane
// stride and writes 12 bytes (see UnknownChoices.h for the pad).
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_LDSDMA_H
#define MLA_RUNTIME_EMU_ISA_LDSDMA_H

#include <cstdint>

namespace mla::emu::isa {

/// The transfer kinds of global_load_lds_* / buffer_load_* ... lds.
enum class LdsDmaWidth : uint8_t {
  UByte,   ///< _ubyte: 1 byte, zero-extended to a dword
  SByte,   ///< _sbyte: 1 byte, sign-extended
  UShort,  ///< _ushort: 2 bytes, zero-extended
  SShort,  ///< _sshort: 2 bytes, sign-extended
  Dword,   ///< _dword: 4 bytes
  Dwordx3, ///< _dwordx3: 12 bytes (gfx950)
  Dwordx4, ///< _dwordx4: 16 bytes (gfx950)
};

/// Bytes read from global memory per lane (1, 2, 4, 12, 16).
unsigned ldsDmaGlobalBytes(LdsDmaWidth width);

/// Bytes between consecutive lanes' LDS destinations (4 for <= 4 bytes, else 16).
unsigned ldsDmaLaneStride(LdsDmaWidth width);

/// Bytes written to LDS per lane (4 for byte/short/dword, 12 or 16).
unsigned ldsDmaLdsBytes(LdsDmaWidth width);

/// LDS byte address of \p lane's destination: (M0 & mask) + instOffset + lane*stride.
/// Computed in 64-bit signed arithmetic so that a caller can reject negative or
/// out-of-range results.
int64_t ldsDmaLaneAddress(uint32_t m0, int32_t instOffset, unsigned lane,
                          LdsDmaWidth width);

/// The bytes written to LDS for one lane from the \p globalBytes it read:
/// ldsDmaLdsBytes(width) bytes into \p ldsBytes (extension for byte/short).
void ldsDmaLaneData(LdsDmaWidth width, const uint8_t *globalBytes, uint8_t ldsBytes[16]);

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_LDSDMA_H
