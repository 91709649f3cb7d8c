//===- Mfma.h - gfx950 MFMA semantics over plain wave register arrays -------===//
//
// The matrix instructions as pure functions of a wave's operand registers:
//   v_mfma_f32_16x16x128_f8f6f4, v_mfma_f32_32x32x64_f8f6f4 and their
//   v_mfma_scale_* forms (reference sections 1.3-1.6 and 8);
//   the legacy v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8} and v_mfma_f32_16x16x32_{bf16,f16}.
//
// Operand registers are given per lane: a[lane][r] is VGPR (or AGPR) r of the operand
// tuple in lane `lane`. Accumulators c/d are [lane][r] floats with 4 (16x16) or 16
// (32x32) registers used. d may alias c. Numerics: see UnknownChoices.h
// (kMfmaAccumulateInDouble): exact products, double accumulation, one f32 rounding.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_MFMA_H
#define MLA_RUNTIME_EMU_ISA_MFMA_H

#include "Fp8Formats.h"
#include "IsaStatus.h"

#include <cstdint>

namespace mla::emu::isa {

inline constexpr unsigned kWaveLanes = 64;

/// Register count of one wave-wide operand or accumulator tuple at most.
inline constexpr unsigned kMaxMfmaOperandRegs = 8;
inline constexpr unsigned kMaxMfmaAccRegs = 16;

using MfmaOperandRegs = uint32_t[kWaveLanes][kMaxMfmaOperandRegs];
using MfmaAccRegs = float[kWaveLanes][kMaxMfmaAccRegs];

/// The two shapes of the f8f6f4 instructions.
enum class MfmaShape : uint8_t {
  M16N16K128, ///< v_mfma[_scale]_f32_16x16x128_f8f6f4: 4 accumulator registers.
  M32N32K64,  ///< v_mfma[_scale]_f32_32x32x64_f8f6f4: 16 accumulator registers.
};

/// Accumulator registers of a shape (4 or 16).
unsigned mfmaAccRegCount(MfmaShape shape);

/// Operand registers a format needs for the f8f6f4 instructions (8 fp8/bf8, 6 fp6,
/// 4 fp4).
unsigned mfmaOperandRegCount(unsigned formatCode);

/// The E8M0 scale operands of v_mfma_scale_* (v_mfma_ld_scale_b32 word): one 32-bit
/// register per lane for A and for B, and the byte each selects (op_sel + 2*op_sel_hi).
struct MfmaScaleOperands {
  const uint32_t *scaleA = nullptr; ///< 64 lanes.
  const uint32_t *scaleB = nullptr; ///< 64 lanes.
  unsigned byteSelectA = 0;         ///< 0..3
  unsigned byteSelectB = 0;         ///< 0..3
};

/// D = A*B + C for v_mfma_f32_{16x16x128,32x32x64}_f8f6f4; with \p scales non-null,
/// the v_mfma_scale_* form, where each 32-wide logical k block of the dot product is
/// multiplied by 2^(sa-127) * 2^(sb-127). \p cbsz / \p blgp are the A / B formats.
/// Fails for fp6/bf6 and undefined format codes, or a byte select > 3.
IsaStatus mfmaF8F6F4(MfmaShape shape, unsigned cbsz, unsigned blgp,
                     const MfmaOperandRegs &a, const MfmaOperandRegs &b,
                     const MfmaAccRegs &c, const MfmaScaleOperands *scales,
                     MfmaAccRegs &d);

/// v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}: A and B are 2 registers (8 bytes) per lane,
/// lane l holds row/column l%16 and k = 8*(l/16) + byte. 4 accumulator registers.
void mfmaF32x16x16x32Fp8(Fp8Kind aKind, Fp8Kind bKind, const MfmaOperandRegs &a,
                         const MfmaOperandRegs &b, const MfmaAccRegs &c,
                         MfmaAccRegs &d);

/// Element type of the 16-bit legacy MFMAs.
enum class Half16Kind : uint8_t { Bf16, F16 };

/// v_mfma_f32_16x16x32_bf16 / _f16: A and B are 4 registers (8 halves, low half first)
/// per lane, lane l holds row/column l%16 and k = 8*(l/16) + i.
void mfmaF32x16x16x32Half(Half16Kind kind, const MfmaOperandRegs &a,
                          const MfmaOperandRegs &b, const MfmaAccRegs &c,
                          MfmaAccRegs &d);

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_MFMA_H
