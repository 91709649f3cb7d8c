//===- Codecs.h - bf16 and fp8 (E4M3FN, E5M2) conversions -------*- C++ -*-===//
//
// Bit-exact host models of the number formats the kernel touches. Every
// f32 -> narrow conversion rounds to nearest, ties to even (kernel-contract.md section 5,
// gfx950-isa.md section 4.1: v_cvt_pk_fp8_f32 runs with ROUND_NEAREST_EVEN).
// Every narrow -> f32 conversion is exact, subnormals included.
//
// Overflow of f32 -> E4M3FN (the documented choice; see docs/numerics.md):
// gfx950's v_cvt_pk_fp8_f32 does not saturate and takes no clamp
// (gfx950-isa.md section 4.2: the assembler rejects `clamp`, MLIR clamps in
// software before the instruction, AMD's host model returns NaN). So a finite
// value whose RNE rounding lies beyond 448 -- any |x| > 464; 464 itself is a tie
// and goes to the even 448 -- encodes as NaN with x's sign (S.1111.111), and so do
// +-Inf and NaN. The kernel only converts in-range values; this defines the rest.
//
// E5M2 (bf8) is IEEE-like (bias 15, Inf = S.11111.00). Its gfx950 overflow
// behaviour is UNKNOWN (gfx950-isa.md section 4.2); this model rounds overflow to
// +-Inf as IEEE does. Nothing in the kernel uses E5M2.
//
//===----------------------------------------------------------------------===//

#ifndef MLA_REFERENCE_CODECS_H
#define MLA_REFERENCE_CODECS_H

#include <cstdint>

namespace mla::ref {

/// The largest finite E4M3FN magnitude, 1.75 * 2^8.
constexpr float kE4M3Max = 448.0f;
/// The largest finite E5M2 magnitude, 1.75 * 2^15.
constexpr float kE5M2Max = 57344.0f;
/// The canonical positive E4M3FN NaN code (0.1111.111); the negative one is 0xFF.
constexpr uint8_t kE4M3NaN = 0x7F;

/// f32 -> bf16 bits, round to nearest even. NaN stays NaN with its sign and gets
/// the quiet bit set (a signalling NaN must not round to Inf); overflow rounds to
/// +-Inf as IEEE does.
uint16_t f32ToBf16(float value);

/// bf16 bits -> f32 (exact: bf16 is the top half of an f32).
float bf16ToF32(uint16_t bits);

/// f32 -> E4M3FN bits, RNE, with the gfx950 overflow rule of this header's comment
/// (|x| > 464, +-Inf and NaN give NaN with x's sign). -0 keeps its sign (0x80).
uint8_t f32ToE4M3(float value);

/// E4M3FN bits -> f32, exact (subnormals m * 2^-9). S.1111.111 gives a NaN with
/// the code's sign.
float e4m3ToF32(uint8_t bits);

/// f32 -> E5M2 bits, RNE; overflow rounds to +-Inf (an assumption, see above);
/// NaN gives the quiet NaN S.11111.10.
uint8_t f32ToE5M2(float value);

/// E5M2 bits -> f32, exact; S.11111.00 is +-Inf, S.11111.{01,10,11} NaN.
float e5m2ToF32(uint8_t bits);

/// The f32 nearest to `value` that E4M3FN represents: e4m3ToF32(f32ToE4M3(value)).
inline float roundToE4M3(float value) { return e4m3ToF32(f32ToE4M3(value)); }

/// The f32 nearest to `value` that bf16 represents: bf16ToF32(f32ToBf16(value)).
inline float roundToBf16(float value) { return bf16ToF32(f32ToBf16(value)); }

} // namespace mla::ref

#endif // MLA_REFERENCE_CODECS_H
