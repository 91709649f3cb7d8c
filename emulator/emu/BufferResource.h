//===- BufferResource.h - MUBUF resource (V#) and range rule -----*- C++ -*-===//
//
// Shared by the buffer loads/stores/atomics (Vmem.cpp) and the buffer loads to LDS
// (LdsDmaOps.cpp). Range checking follows the CDNA/Vega ISA's table:
//   - raw buffer (IDXEN = 0, ADD_TID_ENABLE = 0), whatever STRIDE: out of range when
//     the byte offset (inst_offset + voffset) reaches NUM_RECORDS, which counts bytes;
//   - structured buffer (IDXEN = 1 or ADD_TID_ENABLE = 1): out of range when the
//     index reaches NUM_RECORDS, which counts records (of STRIDE bytes);
//   - soffset is not part of the check;
//   - dwordx2/x3/x4 accesses are checked per dword, atomics as a whole;
//   - an out-of-range component reads 0 and is not written.
// A raw component that straddles NUM_RECORDS is out of range
// (isa::choice::kRawBufferStraddleIsOutOfRange). Swizzled resources are not modelled.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_BUFFERRESOURCE_H
#define MLA_RUNTIME_EMU_BUFFERRESOURCE_H

#include "emu/Instructions.h"
#include "emu/isa/UnknownChoices.h"

namespace mla::emu {

/// The fields of a gfx9 buffer resource the emulator models.
struct BufferResource {
  uint64_t base = 0;      ///< Bits [47:0].
  uint32_t stride = 0;    ///< Bits [61:48].
  uint32_t numRecords = 0;
  bool swizzle = false;   ///< SWIZZLE_ENABLE, bit 63.
  bool addTid = false;    ///< ADD_TID_ENABLE, dword 3 bit 23.
};

inline BufferResource readBufferResource(const Wave &w, const Operand &op) {
  const uint32_t d0 = readScalarDword(w, op, 0), d1 = readScalarDword(w, op, 1),
                 d2 = readScalarDword(w, op, 2), d3 = readScalarDword(w, op, 3);
  BufferResource r;
  r.base = uint64_t(d0) | (uint64_t(d1 & 0xFFFF) << 32);
  r.stride = (d1 >> 16) & 0x3FFF;
  r.swizzle = (d1 >> 31) & 1;
  r.numRecords = d2;
  r.addTid = (d3 >> 23) & 1;
  return r;
}

/// True when the resource is addressed as a structured buffer (index checked).
inline bool isStructuredAccess(const BufferResource &r, bool idxen) { return idxen || r.addTid; }

/// The range rule for one component of \p bytes at byte \p offset (inst_offset +
/// voffset, without soffset) of record \p index.
inline bool bufferComponentInRange(const BufferResource &r, bool structured, uint64_t index,
                                   uint64_t offset, unsigned bytes) {
  static_assert(isa::choice::kRawBufferStraddleIsOutOfRange,
                "a raw component must lie wholly below num_records");
  if (structured)
    return index < r.numRecords;
  return offset + bytes <= r.numRecords;
}

} // namespace mla::emu

#endif // MLA_RUNTIME_EMU_BUFFERRESOURCE_H
