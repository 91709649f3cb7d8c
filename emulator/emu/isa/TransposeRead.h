//===- TransposeRead.h - ds_read_b64_tr_b8 / ds_read_b64_tr_b16 -------------===//
//
// Reference section 2.2 (confirmed in section 8): lanes work in independent groups of
// 16. Each lane t reads 8 contiguous bytes S[t] at its own LDS address, then
//   tr_b8 : result[16g + r].byte[j] = S[16g + 2j + (r>>3)].byte[r & 7]
//   tr_b16: result[16g + r].half[j] = S[16g + 4j + (r>>2)].half[r & 3]
// The ISA requires EXEC all ones and 8-byte-aligned addresses; violations are errors.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_TRANSPOSEREAD_H
#define MLA_RUNTIME_EMU_ISA_TRANSPOSEREAD_H

#include "IsaStatus.h"

#include <cstdint>

namespace mla::emu::isa {

/// Element width of the transposing LDS read.
enum class TransposeElement : uint8_t { B8, B16 };

/// The 16-lane exchange of one wave: \p laneBytes[t] are the 8 bytes lane t read
/// (little-endian in a uint64), \p result[r] the 64-bit value lane r receives (its low
/// dword goes to the even VGPR of the destination pair).
void transposeExchange(TransposeElement element, const uint64_t laneBytes[64],
                       uint64_t result[64]);

/// The whole instruction on an LDS image: \p laneAddress[t] is VGPR[addr] + offset of
/// lane t. Fails (with the offending lane in the message) for EXEC not all ones, an
/// address not 8-byte aligned, or 8 bytes not inside [0, ldsSize).
IsaStatus dsReadB64Transpose(TransposeElement element, const uint8_t *lds,
                             uint64_t ldsSize, const uint64_t laneAddress[64],
                             uint64_t exec, uint64_t result[64]);

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_TRANSPOSEREAD_H
