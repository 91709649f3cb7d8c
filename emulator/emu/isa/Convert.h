//===- Convert.h - gfx950 fp8 conversions and VALU helpers --------------------===//
//
// Reference section 4 (CDNA4 pseudocode): per-lane semantics of
//   v_cvt_pk_{fp8,bf8}_f32, v_cvt_sr_{fp8,bf8}_f32, v_cvt_f32_{fp8,bf8},
//   v_cvt_pk_f32_{fp8,bf8}, v_cvt_scalef32_{pk_fp8_f32, pk_f32_fp8, f32_fp8, sr_fp8_f32}
//   (and the bf8 forms), with op_sel/byte-select and preserved bits;
// and wave-level or per-lane semantics of v_permlane{16,32}_swap_b32,
// v_pk_{fma,mul,add}_f32, v_cvt_pk_bf16_f32 and v_max3_f32.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_CONVERT_H
#define MLA_RUNTIME_EMU_ISA_CONVERT_H

#include "Fp8Formats.h"
#include "IsaStatus.h"

#include <cstdint>

namespace mla::emu::isa {

/// v_cvt_pk_{fp8,bf8}_f32: {enc(s1), enc(s0)} (s0 in the low byte), RNE, written to the
/// low 16 bits (\p highWord false) or the high 16 bits (op_sel[3]) of \p old, whose
/// other half is preserved.
uint32_t cvtPkF32ToFp8(Fp8Kind kind, float s0, float s1, uint32_t old, bool highWord);

/// v_cvt_sr_{fp8,bf8}_f32: stochastic rounding of \p s0 with \p random (S1), written to
/// byte \p byteSelect (op_sel[3:2]) of \p old; the other bytes are preserved.
uint32_t cvtSrF32ToFp8(Fp8Kind kind, float s0, uint32_t random, uint32_t old,
                       unsigned byteSelect);

/// v_cvt_f32_{fp8,bf8}: byte \p byteSelect (SDWA src0_sel BYTE_n) of \p src, exactly.
float cvtFp8ToF32(Fp8Kind kind, uint32_t src, unsigned byteSelect);

/// v_cvt_pk_f32_{fp8,bf8}: the two bytes of word \p highWord (src0_sel WORD_1) of
/// \p src; out[0] from the low byte, out[1] from the high byte.
void cvtPkFp8ToF32(Fp8Kind kind, uint32_t src, bool highWord, float out[2]);

/// The E8M0 exponent a scaled conversion uses: bits [30:23] of the f32 scale operand.
uint8_t scaleExponent(float scale);

/// v_cvt_scalef32_pk_{fp8,bf8}_f32: {enc(s1 / 2^(e-127)), enc(s0 / 2^(e-127))} into
/// the word op_sel[3] selects; the other word of \p old preserved.
uint32_t cvtScalef32PkF32ToFp8(Fp8Kind kind, float s0, float s1, float scale,
                               uint32_t old, bool highWord);

/// v_cvt_scalef32_pk_f32_{fp8,bf8}: word op_sel[0] of \p src, each byte decoded and
/// multiplied by 2^(e-127) (rounded to f32).
void cvtScalef32PkFp8ToF32(Fp8Kind kind, uint32_t src, float scale, bool highWord,
                           float out[2]);

/// v_cvt_scalef32_f32_{fp8,bf8}: byte op_sel[1:0] of \p src times 2^(e-127).
float cvtScalef32Fp8ToF32(Fp8Kind kind, uint32_t src, float scale, unsigned byteSelect);

/// v_cvt_scalef32_sr_{fp8,bf8}_f32: stochastic rounding of s0 / 2^(e-127) with
/// \p random into byte op_sel[3:2] of \p old.
uint32_t cvtScalef32SrF32ToFp8(Fp8Kind kind, float s0, uint32_t random, float scale,
                               uint32_t old, unsigned byteSelect);

/// v_permlane16_swap_b32 vdst, vsrc: rows are 16 lanes; the odd rows (1, 3) of \p vdst
/// are exchanged with the even rows (0, 2) of \p vsrc. Both registers are updated.
IsaStatus permlane16Swap(uint32_t vdst[64], uint32_t vsrc[64], uint64_t exec);

/// v_permlane32_swap_b32 vdst, vsrc: lanes 32..63 of \p vdst are exchanged with lanes
/// 0..31 of \p vsrc.
IsaStatus permlane32Swap(uint32_t vdst[64], uint32_t vsrc[64], uint64_t exec);

/// VOP3P modifiers of the packed f32 operations; bit i refers to source i.
struct PackedF32Modifiers {
  unsigned opSel = 0;     ///< source i feeds the low result from its high half
  unsigned opSelHi = 0x7; ///< source i feeds the high result from its high half
  unsigned negLo = 0;     ///< negate source i for the low result
  unsigned negHi = 0;     ///< negate source i for the high result
};

/// v_pk_fma_f32 / v_pk_mul_f32 / v_pk_add_f32 on 64-bit register pairs (low dword =
/// element 0). fma rounds once per element.
uint64_t pkFmaF32(uint64_t a, uint64_t b, uint64_t c, const PackedF32Modifiers &mods);
uint64_t pkMulF32(uint64_t a, uint64_t b, const PackedF32Modifiers &mods);
uint64_t pkAddF32(uint64_t a, uint64_t b, const PackedF32Modifiers &mods);

/// v_cvt_pk_bf16_f32: {bf16(s1), bf16(s0)} with RNE (s0 in the low half).
uint32_t cvtPkBf16F32(float s0, float s1);

/// v_max3_f32: max(max(a, b), c) with IEEE maxNum rules (see UnknownChoices.h).
float max3F32(float a, float b, float c);

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_CONVERT_H
