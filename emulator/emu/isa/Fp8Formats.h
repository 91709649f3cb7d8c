//===- Fp8Formats.h - Narrow float formats of gfx950 (OCP fp8/bf8, fp4, E8M0) -===//
//
// Pure, table-driven codecs for the element formats the gfx950 matrix and conversion
// instructions consume and produce (reference section 1.2 and 4.2). gfx950 uses the OCP
// formats, not the FNUZ variants of gfx942:
//   E4M3FN (fp8): bias 7, max +-448, NaN = S.1111.111, no Inf.
//   E5M2  (bf8): bias 15, max +-57344, Inf = S.11111.00, NaN = S.11111.{01,10,11}.
//   E2M1  (fp4): bias 1, max +-6, no NaN/Inf.
//   E8M0 scale: 2^(e-127), 0xFF = NaN.
// Choices where the reference is silent live in UnknownChoices.h.
//
//===----------------------------------------------------------------------===//
#ifndef MLA_RUNTIME_EMU_ISA_FP8FORMATS_H
#define MLA_RUNTIME_EMU_ISA_FP8FORMATS_H

#include <cstdint>

namespace mla::emu::isa {

/// The 8-bit float formats of the fp8 conversion instructions.
enum class Fp8Kind : uint8_t {
  E4M3, ///< "fp8": OCP E4M3FN.
  E5M2, ///< "bf8": OCP E5M2.
};

/// Matrix operand formats selected by cbsz (A) / blgp (B) of the f8f6f4 MFMAs.
enum class MatrixFormat : uint8_t {
  Fp8E4M3 = 0,
  Bf8E5M2 = 1,
  Fp6E2M3 = 2,
  Bf6E3M2 = 3,
  Fp4E2M1 = 4,
};

/// Returns true when \p code (a cbsz/blgp value) is a format the emulator implements
/// (fp8, bf8, fp4); fp6/bf6 and 5..7 are refused (see UnknownChoices.h).
bool isSupportedMatrixFormat(unsigned code);

/// Human-readable name of a cbsz/blgp code, for error messages.
const char *matrixFormatName(unsigned code);

/// Decodes one E4M3FN byte exactly (subnormals included; NaN codes give a quiet NaN
/// with the byte's sign).
float decodeE4M3(uint8_t byte);
/// Decodes one E5M2 byte exactly (Inf codes give +-Inf, NaN codes a quiet NaN).
float decodeE5M2(uint8_t byte);
/// Decodes one fp8/bf8 byte.
float decodeFp8(Fp8Kind kind, uint8_t byte);
/// Decodes the low 4 bits of \p nibble as E2M1.
float decodeE2M1(uint8_t nibble);

/// The 256-entry decode tables behind decodeE4M3/decodeE5M2 (for hot loops).
const float *e4m3DecodeTable();
const float *e5m2DecodeTable();
/// 16-entry E2M1 decode table.
const float *e2m1DecodeTable();

/// E8M0 scale value 2^(e-127) as a double; 0xFF gives NaN.
double decodeE8M0(uint8_t e);

/// Encodes \p x (any double, so scaled conversions can pass x / 2^k exactly) to an
/// fp8/bf8 byte with round-to-nearest-even and the gfx950 overflow rules of
/// UnknownChoices.h (E4M3: NaN above 464 and for Inf; E5M2: Inf from 61440 on).
uint8_t encodeFp8Rne(Fp8Kind kind, double x);

/// Stochastic-rounding encode of the f32 \p x with the 32-bit random operand \p random
/// (v_cvt_sr_fp8_f32 / v_cvt_sr_bf8_f32): the top 20 (fp8) or 21 (bf8) bits of
/// \p random are added below the kept mantissa bits and the sum is truncated.
uint8_t encodeFp8Stochastic(Fp8Kind kind, float x, uint32_t random);

/// f32 <-> bf16 (RNE, NaN quieted with sign kept) and f16 -> f32 (exact).
uint16_t encodeBf16Rne(float x);
float decodeBf16(uint16_t bits);
float decodeF16(uint16_t bits);

/// Bit casts.
uint32_t floatBits(float x);
float bitsToFloat(uint32_t bits);

} // namespace mla::emu::isa

#endif // MLA_RUNTIME_EMU_ISA_FP8FORMATS_H
